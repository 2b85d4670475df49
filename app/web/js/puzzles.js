// Puzzles (`#/puzzles`, one by number `#/puzzles/ID`): a position from a real game, the side to
// move yours, shown just after the opponent's move that made it possible. Each move you make is
// judged by the server at once (`POST /api/puzzles/ID/moves`): right, and it answers with the
// opponent's reply; wrong, or the last move of the line, and the puzzle is over: the solution is
// played out on the board (after a wrong move, to a registered player only, once the server has
// recorded the try), and a signed-in player's first try moves their puzzle rating.

import { api, query } from "./api.js";
import { Board, labelsSwitch } from "./board.js";
import { h, mount, setTitle } from "./dom.js";
import { renderMoveList } from "./movelist.js";
import { variantName } from "./notation.js";
import { session } from "./session.js";
import { play as sound } from "./sound.js";

const THEME_NAMES = {
  crowning: "Crowning",
  endgame: "Endgame",
  long: "Long line",
  material: "Wins material",
  middlegame: "Middle game",
  multi_jump: "Multi-jump",
  one_move: "One move",
  opening: "Opening",
  quiet_move: "Quiet first move",
  short: "Two moves",
  shot: "Shot (a sacrifice)",
  win: "Wins the game",
};
const REPLY_DELAY_MS = 400;

const colourName = (colour) => (colour === "black" ? "Black" : "White");

export async function render(main, params, search) {
  setTitle("Puzzles");
  let variant = search.get("variant") === "pool" ? "pool" : "english";
  let theme = search.get("theme") || "";
  let puzzle = null;
  let line = []; // the moves of the line so far: yours and the replies
  let over = false;
  let stopped = false;
  let showing = null; // the solution's ply shown after the end

  const board = new Board({ label: "Puzzle board", onMove: (text) => move(text) });
  const prompt = h("p", { class: "puzzle-prompt", role: "status", "aria-live": "polite" });
  const facts = h("p", { class: "muted" });
  const list = h("ol", { class: "move-list", "aria-label": "Moves" });
  const error = h("p", { class: "error-text", role: "alert" });
  const ratingBox = h("div", { class: "puzzle-rating", "aria-live": "polite" });
  const mine = h("p", { class: "muted puzzle-mine" });

  async function showMine() {
    if (!session.user || session.user.kind !== "registered") {
      mine.textContent = "";
      return;
    }
    try {
      const me = await api.get("/api/puzzles/dashboard");
      if (stopped) return;
      mine.textContent = `Your puzzle rating: ${me.rating}${me.provisional ? "?" : ""} · ${me.solved} solved of ${me.played}`;
    } catch {
      mine.textContent = "";
    }
  }
  const next = h("button", {
    type: "button",
    class: "primary",
    text: "Next puzzle",
    onClick: () => loadNext(),
  });
  const variantSelect = h(
    "select",
    { name: "variant", "aria-label": "Variant" },
    h("option", { value: "english", text: "English draughts", selected: variant === "english" }),
    h("option", { value: "pool", text: "American pool checkers", selected: variant === "pool" }),
  );
  const themeSelect = h(
    "select",
    { name: "theme", "aria-label": "Theme" },
    h("option", { value: "", text: "Any theme" }),
    ...Object.entries(THEME_NAMES).map(([value, text]) =>
      h("option", { value, text, selected: value === theme }),
    ),
  );
  const choose = h(
    "form",
    {
      class: "toolbar",
      "aria-label": "Choose puzzles",
      onSubmit: (event) => {
        event.preventDefault();
        variant = variantSelect.value;
        theme = themeSelect.value;
        loadNext();
      },
    },
    variantSelect,
    themeSelect,
    h("button", { type: "submit", text: "Show" }),
  );
  const solutionNav = h("div", { class: "toolbar", hidden: true });

  let fens = []; // the FEN after each move of the line, [0] the puzzle's position

  function solver() {
    return puzzle.turn;
  }

  function draw({ legalMoves = [], lastMove = null } = {}) {
    board.set({
      fen: fens[line.length],
      flipped: solver() === "black",
      legalMoves,
      interactive: !over && legalMoves.length > 0,
      lastMove,
      animate: true,
    });
    renderMoveList(list, { moves: line, startTurn: solver(), current: line.length });
  }

  // After the end: the solution, stepped through.
  function step(ply) {
    const solution = puzzle.solution;
    showing = Math.max(0, Math.min(solution.length, ply));
    board.set({
      fen: puzzle.solution_fens[showing],
      legalMoves: [],
      interactive: false,
      lastMove: showing ? solution[showing - 1] : puzzle.last_move,
      animate: true,
    });
    renderMoveList(list, {
      moves: solution,
      startTurn: solver(),
      current: showing,
      onPick: (n) => step(n),
    });
  }

  function showRating(answer) {
    if (answer.rated) showMine();
    if (answer.rated && answer.rating) {
      const diff = answer.rating.diff;
      mount(
        ratingBox,
        h("p", {
          text: `Your puzzle rating: ${answer.rating.after} (${diff >= 0 ? "+" : ""}${diff})`,
        }),
      );
    } else if (!session.user || session.user.kind !== "registered") {
      mount(ratingBox, h("p", { class: "muted", text: "Sign up to keep a puzzle rating." }));
    } else {
      mount(ratingBox, h("p", { class: "muted", text: "Tried before: not rated again." }));
    }
  }

  async function move(text) {
    if (!puzzle || over) return;
    error.textContent = "";
    const shown = puzzle;
    const sent = [...line, text];
    let answer;
    try {
      answer = await api.post(`/api/puzzles/${shown.id}/moves`, { moves: sent });
    } catch (err) {
      error.textContent = err.message;
      return;
    }
    if (stopped || puzzle !== shown) return;
    line = sent;
    fens[line.length] = answer.moved_fen;
    if (!answer.correct) {
      over = true;
      sound("illegal");
      prompt.textContent = `Wrong: ${text} is not it.`;
      prompt.dataset.verdict = "wrong";
      draw({ lastMove: text });
      if (!answer.correct_move) {
        // A visitor's or a guest's try is not on record: the server keeps the solution.
        prompt.textContent += " Sign up to see the solution.";
        showRating(answer);
        return;
      }
      // A registered player's try is recorded: the puzzle now shows its solution.
      let tried;
      try {
        tried = await api.get(`/api/puzzles/${shown.id}`);
      } catch (err) {
        error.textContent = err.message;
        showRating(answer);
        return;
      }
      if (stopped || puzzle !== shown) return;
      prompt.textContent += ` The solution: ${tried.solution.join(" ")}`;
      finish({ ...answer, solution: tried.solution, solution_fens: tried.solution_fens });
      return;
    }
    sound("move");
    if (answer.done) {
      over = true;
      prompt.textContent = "Solved! That was the one winning line.";
      prompt.dataset.verdict = "right";
      draw({ lastMove: text });
      finish(answer);
      return;
    }
    prompt.textContent = `Right! Keep going: ${colourName(solver())} to move.`;
    prompt.dataset.verdict = "right";
    draw({ lastMove: text });
    setTimeout(() => {
      if (stopped || puzzle !== shown) return;
      line = [...line, answer.reply];
      fens[line.length] = answer.fen;
      draw({ legalMoves: answer.legal_moves, lastMove: answer.reply });
    }, REPLY_DELAY_MS);
  }

  function finish(answer) {
    puzzle.solution = answer.solution;
    puzzle.solution_fens = answer.solution_fens;
    showRating(answer);
    const analysis = h("a", {
      href: `#/analysis${query({ variant: puzzle.variant, fen: puzzle.fen })}`,
      text: "Analysis board",
    });
    mount(
      solutionNav,
      h("span", { class: "muted", text: "Solution: " }),
      h("button", { type: "button", text: "‹ Start", onClick: () => step(0) }),
      h("button", { type: "button", text: "‹ Back", onClick: () => step((showing ?? 0) - 1) }),
      h("button", { type: "button", text: "Forward ›", onClick: () => step((showing ?? 0) + 1) }),
      analysis,
    );
    solutionNav.hidden = false;
    renderMoveList(list, {
      moves: answer.solution,
      startTurn: solver(),
      current: answer.solution.length,
      onPick: (n) => step(n),
    });
  }

  function show(found) {
    puzzle = found;
    line = [];
    over = false;
    showing = null;
    fens = [found.fen];
    solutionNav.hidden = true;
    mount(ratingBox);
    error.textContent = "";
    history.replaceState(null, "", `#/puzzles/${found.id}`);
    setTitle(`Puzzle ${found.id}`);
    prompt.textContent = `Your turn: find the best move for ${colourName(found.turn)}.`;
    delete prompt.dataset.verdict;
    const moves = found.solver_moves === 1 ? "one move" : `${found.solver_moves} moves`;
    const themes = (found.themes || []).map((t) => THEME_NAMES[t] || t).join(", ");
    facts.textContent = `Puzzle ${found.id} · ${variantName(found.variant)} · rated ${found.rating} · ${moves} · ${themes}`;
    // The opponent's move that set it up is shown being made, then yours to find.
    if (found.before_fen && found.last_move) {
      board.set({ fen: found.before_fen, flipped: found.turn === "black", legalMoves: [] });
    }
    draw({ legalMoves: found.legal_moves, lastMove: found.last_move });
    if (found.solution) {
      mount(ratingBox, h("p", { class: "muted", text: "Tried before: not rated again." }));
    }
  }

  async function loadNext() {
    try {
      show(await api.get(`/api/puzzles/next${query({ variant, theme: theme || undefined })}`));
    } catch (err) {
      error.textContent = err.message;
    }
  }

  async function loadOne(id) {
    try {
      show(await api.get(`/api/puzzles/${id}`));
    } catch (err) {
      error.textContent = err.message;
    }
  }

  mount(
    main,
    h("h1", { text: "Puzzles" }),
    mine,
    facts,
    h(
      "div",
      { class: "game-layout" },
      h(
        "div",
        { class: "board-area" },
        board.element,
        h("div", { class: "toolbar view-tools" }, labelsSwitch(board)),
        error,
      ),
      h(
        "aside",
        { class: "side-panel" },
        h(
          "section",
          { class: "panel", "aria-label": "Puzzle" },
          prompt,
          ratingBox,
          solutionNav,
          h("div", { class: "toolbar" }, next),
        ),
        h("section", { class: "panel" }, h("h2", { text: "Moves" }), list),
        h("section", { class: "panel" }, h("h2", { text: "Choose" }), choose),
      ),
    ),
  );
  showMine();
  if (params.id) await loadOne(params.id);
  else await loadNext();
  return () => {
    stopped = true;
  };
}

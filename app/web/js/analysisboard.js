// The analysis board (`#/analysis?variant=english&fen=FEN&moves=11-15,23-19`): any position of
// either variant (the usual start, a FEN typed in, or a game's position from its replay), moves
// played freely for both sides (the server checks each and sends the legal ones), the moves
// stepped back and forth, and the engine's line deepening while "Engine" is on: the page asks
// for depth 1, 2, 3… (`GET /api/analysis/position`) until the position changes, the engine is
// switched off, or depth 20. The address always holds the position and the moves: share it.

import { api, query } from "./api.js";
import { Board, labelsSwitch } from "./board.js";
import { h, mount, setTitle } from "./dom.js";
import { renderMoveList } from "./movelist.js";
import { parseFen, variantName } from "./notation.js";

const MAX_DEPTH = 20;
const RETRY_MS = 1000; // after a refusal for the server's being busy (`Retry-After: 1`)
const START_FEN = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12";

export async function render(main, _params, search) {
  setTitle("Analysis board");
  let variant = search.get("variant") === "pool" ? "pool" : "english";
  let fen = search.get("fen") || null;
  let moves = (search.get("moves") || "").split(",").filter(Boolean);
  let shown = null; // the server's answer for the position on the board
  let engineOn = false;
  let asked = 0; // the number of the position asked for last: stale answers are dropped
  let stopped = false;
  const lines = new Map(); // depth -> line, for the position on the board

  const board = new Board({
    label: "Analysis board",
    onMove: (text) => play(text),
    onSquare: (square) => editing && place(square),
  });
  // Setting up a position by hand: the piece chosen is put on each square clicked (the same
  // piece again empties it); a man on the row it is crowned on is made a king there.
  let editing = false;
  let placing = "black-man";
  let edited = new Map(); // square -> { color, king }
  let editTurn = "black";
  const editor = h("div", { class: "position-editor", hidden: true });
  const editButton = h("button", {
    type: "button",
    "aria-pressed": "false",
    text: "Set up by hand",
    onClick: () => (editing ? finishEditing() : startEditing()),
  });

  function editedFen() {
    const side = (color) =>
      [...edited.entries()]
        .filter(([, piece]) => piece.color === color)
        .sort(([a], [b]) => a - b)
        .map(([square, piece]) => `${piece.king ? "K" : ""}${square}`)
        .join(",");
    return `${editTurn === "white" ? "W" : "B"}:W${side("white")}:B${side("black")}`;
  }

  function drawEdited() {
    board.set({ fen: editedFen(), legalMoves: [], interactive: false, lastMove: null, arrow: null });
    facts.textContent = `Setting up: ${edited.size} pieces · ${editTurn === "black" ? "Black" : "White"} to move · click the squares`;
  }

  function place(square) {
    const [color, kind] = placing.split("-");
    if (placing === "empty") edited.delete(square);
    else {
      const crownRow = color === "black" ? square >= 29 : square <= 4;
      const piece = { color, king: kind === "king" || crownRow };
      const there = edited.get(square);
      if (there && there.color === piece.color && there.king === piece.king) edited.delete(square);
      else edited.set(square, piece);
    }
    drawEdited();
    return true;
  }

  function startEditing() {
    editing = true;
    engineOn = false;
    engineButton.setAttribute("aria-pressed", "false");
    engineButton.textContent = "Start engine";
    editButton.setAttribute("aria-pressed", "true");
    editButton.textContent = "Done";
    const shownFen = shown ? shown.fen : null;
    edited = shownFen ? new Map(parseFen(shownFen).pieces) : new Map();
    editTurn = shownFen ? parseFen(shownFen).turn : "black";
    const choices = [
      ["black-man", "Black man"],
      ["black-king", "Black king"],
      ["white-man", "White man"],
      ["white-king", "White king"],
      ["empty", "Empty square"],
    ];
    mount(
      editor,
      h(
        "fieldset",
        { class: "toolbar" },
        h("legend", { text: "Piece to place" }),
        ...choices.map(([value, text]) =>
          h(
            "label",
            {},
            h("input", {
              type: "radio",
              name: "placing",
              value,
              checked: value === placing,
              onChange: () => {
                placing = value;
              },
            }),
            ` ${text}`,
          ),
        ),
      ),
      h(
        "div",
        { class: "toolbar" },
        h(
          "select",
          {
            "aria-label": "Side to move",
            onChange: (event) => {
              editTurn = event.target.value;
              drawEdited();
            },
          },
          h("option", { value: "black", text: "Black to move", selected: editTurn === "black" }),
          h("option", { value: "white", text: "White to move", selected: editTurn === "white" }),
        ),
        h("button", {
          type: "button",
          text: "Clear board",
          onClick: () => {
            edited = new Map();
            drawEdited();
          },
        }),
        h("button", {
          type: "button",
          text: "Start position",
          onClick: () => {
            edited = new Map(parseFen(START_FEN).pieces);
            editTurn = "black";
            drawEdited();
          },
        }),
      ),
    );
    editor.hidden = false;
    back.disabled = true;
    engineButton.disabled = true;
    drawEdited();
  }

  function finishEditing() {
    editing = false;
    editor.hidden = true;
    editButton.setAttribute("aria-pressed", "false");
    editButton.textContent = "Set up by hand";
    engineButton.disabled = false;
    fen = editedFen();
    fenInput.value = fen;
    moves = [];
    load();
  }
  const list = h("ol", { class: "move-list", "aria-label": "Moves" });
  const error = h("p", { class: "error-text", role: "alert" });
  const facts = h("p", { class: "muted" });
  const engineBox = h("div", { class: "engine-lines", "aria-live": "polite" });
  const engineButton = h("button", {
    type: "button",
    "aria-pressed": "false",
    onClick: () => {
      engineOn = !engineOn;
      engineButton.setAttribute("aria-pressed", String(engineOn));
      engineButton.textContent = engineOn ? "Stop engine" : "Start engine";
      if (engineOn) deepen(asked, 1);
      drawEngine();
    },
    text: "Start engine",
  });
  const variantSelect = h(
    "select",
    { name: "variant", "aria-label": "Variant" },
    h("option", { value: "english", text: "English draughts", selected: variant === "english" }),
    h("option", { value: "pool", text: "American pool checkers", selected: variant === "pool" }),
  );
  const fenInput = h("input", {
    name: "fen",
    size: "40",
    "aria-label": "Start position (FEN)",
    placeholder: "B:W21,22,…:B1,2,… (empty: the usual start)",
    value: fen || "",
  });
  const setup = h(
    "form",
    {
      class: "toolbar",
      "aria-label": "Set up a position",
      onSubmit: (event) => {
        event.preventDefault();
        variant = variantSelect.value;
        fen = fenInput.value.trim() || null;
        moves = [];
        load();
      },
    },
    variantSelect,
    fenInput,
    h("button", { type: "submit", text: "Set up" }),
  );
  const back = h("button", {
    type: "button",
    "aria-label": "Take back the last move",
    onClick: () => {
      moves = moves.slice(0, -1);
      load();
    },
    text: "‹ Back",
  });

  function address() {
    const params = { variant, fen: fen || undefined, moves: moves.length ? moves.join(",") : undefined };
    history.replaceState(null, "", `#/analysis${query(params)}`);
  }

  async function load() {
    const number = ++asked;
    lines.clear();
    error.textContent = "";
    address();
    try {
      const answer = await api.get(
        `/api/analysis/position${query({ variant, fen: fen || undefined, moves: moves.join(",") || undefined })}`,
      );
      if (stopped || number !== asked) return;
      shown = answer;
      moves = answer.moves;
    } catch (err) {
      if (stopped || number !== asked) return;
      if (err.code === "rate_limited") {
        // The server busy with others' requests (or this address's): ask again in a moment.
        setTimeout(() => !stopped && number === asked && load(), RETRY_MS);
        return;
      }
      error.textContent = err.message;
      if (moves.length && err.code === "bad_request") {
        moves = moves.slice(0, -1); // the move refused: back to where it was legal
        load();
      }
      return;
    }
    draw();
    if (engineOn) deepen(number, 1);
  }

  async function deepen(number, depth) {
    if (stopped || !engineOn || number !== asked || depth > MAX_DEPTH || !shown || shown.result)
      return;
    try {
      const answer = await api.get(
        `/api/analysis/position${query({ variant, fen: fen || undefined, moves: moves.join(",") || undefined, depth })}`,
      );
      if (stopped || number !== asked || !answer.line) return;
      lines.set(depth, answer.line);
      drawEngine();
      deepen(number, depth + 1);
    } catch (err) {
      if (number !== asked) return;
      // The server busy (or this address's last search not over): the same depth in a moment.
      if (err.code === "rate_limited") setTimeout(() => deepen(number, depth), RETRY_MS);
      else error.textContent = err.message;
    }
  }

  function play(text) {
    moves = [...moves, text];
    load();
  }

  function drawEngine() {
    const latest = [...lines.values()].pop();
    board.set({ arrow: engineOn && latest ? latest.best : null });
    if (!engineOn) {
      mount(engineBox, h("p", { class: "muted", text: "The engine is off." }));
      return;
    }
    if (shown && shown.result) {
      mount(engineBox, h("p", { text: "The game is over here." }));
      return;
    }
    const rows = [...lines.entries()]
      .reverse()
      .slice(0, 6)
      .map(([depth, line]) =>
        h(
          "li",
          { dataset: { depth: String(depth) } },
          h("span", { class: "engine-depth", text: `depth ${depth}` }),
          " ",
          h("strong", { class: "engine-eval", text: line.eval.text }),
          " ",
          h("span", { class: "engine-pv", text: line.pv.join(" ") }),
        ),
      );
    mount(
      engineBox,
      rows.length
        ? h("ol", { class: "engine-list", "aria-label": "Engine lines" }, rows)
        : h("p", { class: "muted", text: "Thinking…" }),
    );
  }

  function draw() {
    const start = parseFen(shown.start_fen).turn;
    board.set({
      fen: shown.fen,
      legalMoves: shown.legal_moves,
      interactive: !shown.result,
      lastMove: moves.length ? moves[moves.length - 1] : null,
    });
    renderMoveList(list, {
      moves,
      startTurn: start,
      current: moves.length,
      onPick: (ply) => {
        moves = moves.slice(0, ply);
        load();
      },
    });
    back.disabled = moves.length === 0;
    facts.textContent = `${variantName(shown.variant)} · ${
      shown.result ? `game over (${shown.result})` : `${shown.turn === "black" ? "Black" : "White"} to move`
    }`;
    drawEngine();
  }

  mount(
    main,
    h("h1", { text: "Analysis board" }),
    facts,
    h(
      "div",
      { class: "game-layout" },
      h(
        "div",
        { class: "board-area" },
        board.element,
        h("div", { class: "toolbar view-tools" }, back, engineButton, labelsSwitch(board)),
        error,
      ),
      h(
        "aside",
        { class: "side-panel" },
        h(
          "section",
          { class: "panel", "aria-labelledby": "engine-title" },
          h("h2", { id: "engine-title", text: "Engine" }),
          engineBox,
        ),
        h("section", { class: "panel" }, h("h2", { text: "Moves" }), list),
        h("section", { class: "panel" }, h("h2", { text: "Position" }), setup, editButton, editor),
      ),
    ),
  );
  await load();
  return () => {
    stopped = true;
  };
}

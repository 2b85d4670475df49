// The replay viewer: a finished (or live) game from the archive, stepped with buttons, arrow
// keys or its move list; each move with the mover's clock time where the record holds it; shown
// from the viewer's side when it is their game. PDN download and copy. Positions come from the
// server (`?positions=true`). A game of a private table is its players' (the token goes with
// every request) or opened by the table's invite code (`#/games/31?invite=CODE`).

import { analysisPanel } from "./analysis.js";
import { api, getToken, query } from "./api.js";
import { Board, labelsSwitch } from "./board.js";
import { gameClockText, ratedSide } from "./archive.js";
import { formatClock, formatDate, h, mount, setTitle, toast } from "./dom.js";
import { renderMoveList } from "./movelist.js";
import {
  colorName,
  describeOutcome,
  describeOutcomeFor,
  outcomeFor,
  parseFen,
  variantName,
} from "./notation.js";
import { session } from "./session.js";

export async function render(main, { game: id }, search) {
  setTitle(`Game ${id}`);
  mount(main, h("p", { class: "muted", text: "Loading the game…" }));
  const invite = (search && search.get("invite")) || undefined;
  let game;
  try {
    game = await api.get(`/api/games/${id}${query({ positions: true, invite })}`);
  } catch (error) {
    mount(
      main,
      h("h1", { text: `Game ${id}` }),
      h("p", { class: "error-text", role: "alert", text: error.message }),
    );
    return null;
  }
  const moves = (game.moves || []).map((m) => m.move);
  // positions[0] is the start, positions[n] the position after ply n.
  const positions = [game.start_position, ...(game.moves || []).map((m) => m.fen_after)];
  const startTurn = game.start_position ? parseFen(game.start_position).turn : "black";
  const clocks = (game.moves || []).map((m) =>
    typeof m.clock_ms === "number" ? m.clock_ms : null,
  );
  const hasClocks = clocks.some((ms) => ms !== null);
  let ply = moves.length;
  // The viewer's own game is shown from their colour.
  const user = session.user;
  const viewerColour =
    user && game.black === user.name ? "black" : user && game.white === user.name ? "white" : null;

  const board = new Board({ label: `Game ${id} replay board` });
  const analysis = analysisPanel({
    gameId: id,
    invite,
    status: game.status,
    onChange: () => go(ply, false),
    onPick: (target) => go(target),
  });
  board.set({ flipped: viewerColour === "black" });
  const list = h("ol", { class: "move-list", "aria-label": "Moves" });
  const topBar = h("div", { class: "player-bar top" });
  const bottomBar = h("div", { class: "player-bar bottom" });
  const status = h("p", { class: "visually-hidden", "aria-live": "polite" });
  const counter = h("span", { class: "muted" });
  const button = (label, text, action) =>
    h("button", {
      type: "button",
      "aria-label": label,
      title: label,
      onClick: () => action(),
      text,
    });
  const controls = h(
    "div",
    { class: "replay-controls", role: "toolbar", "aria-label": "Replay controls" },
    button("First position", "«", () => go(0)),
    button("Previous move", "‹", () => go(ply - 1)),
    button("Next move", "›", () => go(ply + 1)),
    button("Last position", "»", () => go(moves.length)),
    h("a", {
      class: "button",
      href: "#/analysis",
      onClick: (event) => {
        // The position on the board, with the game's variant.
        event.preventDefault();
        const fen = positions[ply] || game.start_position;
        location.hash = `#/analysis${query({ variant: game.variant, fen })}`;
      },
      text: "Analysis board",
    }),
    h("button", {
      type: "button",
      onClick: () => {
        board.set({ flipped: !board.state.flipped });
        drawBars();
      },
      text: "Flip board",
    }),
    counter,
  );

  /** Each side's clock after `ply` plies: its last move's time, or the base before it moved. */
  function clocksAt(upTo) {
    const base = game.clock ? game.clock.base_s * 1000 : null;
    const left = { black: base, white: base };
    for (let i = 0; i < upTo; i++) {
      const colour = (i + (startTurn === "white" ? 1 : 0)) % 2 === 0 ? "black" : "white";
      if (clocks[i] !== null) left[colour] = clocks[i];
    }
    return left;
  }

  function fillBar(bar, colour) {
    const left = clocksAt(ply)[colour];
    bar.dataset.colour = colour;
    mount(
      bar,
      h(
        "span",
        { class: "name" },
        h("span", { class: `seat-dot ${colour}`, "aria-hidden": "true" }),
        h("span", { class: "visually-hidden", text: `${colorName(colour)}: ` }),
        game[colour] || "?",
        ...ratedSide(game[`${colour}_rating`]),
      ),
      hasClocks || game.clock
        ? h("span", {
            class: "clock",
            role: "timer",
            "aria-label": `${colorName(colour)} clock`,
            text: left === null ? "–" : formatClock(left).replace(/\.\d$/, ""),
          })
        : null,
    );
  }

  function drawBars() {
    const bottom = board.state.flipped ? "black" : "white";
    fillBar(bottomBar, bottom);
    fillBar(topBar, bottom === "black" ? "white" : "black");
  }

  function go(target, animate = true) {
    const before = ply;
    ply = Math.max(0, Math.min(moves.length, target));
    const fen = positions[ply] || game.start_position;
    board.set({
      fen,
      lastMove: ply > 0 ? moves[ply - 1] : null,
      animate: animate && ply === before + 1,
      arrow: analysis.bestAt(ply),
    });
    analysis.at(ply);
    const hadFocus = list.contains(document.activeElement);
    renderMoveList(list, {
      moves,
      startTurn,
      current: ply,
      onPick: go,
      clocks,
      marks: analysis.marks(),
    });
    if (hadFocus) {
      const current = list.querySelector("button[tabindex='0']");
      if (current) current.focus({ preventScroll: true });
    }
    counter.textContent = `Move ${ply} of ${moves.length}`;
    status.textContent = ply > 0 ? `Move ${ply}: ${moves[ply - 1]}` : "Start position";
    drawBars();
  }

  // Arrow keys, Home and End step through the game from anywhere on the page but a form field
  // (the move list's own buttons included).
  const onKey = (event) => {
    if (event.target.closest("input, textarea, select")) return;
    const actions = {
      ArrowLeft: ply - 1,
      ArrowRight: ply + 1,
      Home: 0,
      End: moves.length,
    };
    if (event.target.closest(".move-list")) {
      actions.ArrowUp = ply - 1;
      actions.ArrowDown = ply + 1;
    }
    if (!(event.key in actions) || event.target.closest(".board-grid")) return;
    event.preventDefault();
    go(actions[event.key]);
  };
  document.addEventListener("keydown", onKey);

  const pdnUrl = `/api/games/${id}.pdn${query({ invite })}`;
  const pdnText = h("textarea", { class: "pdn-text", readonly: true, "aria-label": "PDN text" });
  const copy = async () => {
    try {
      if (!pdnText.value) pdnText.value = await fetchPdn(pdnUrl);
      await copyText(pdnText);
      toast("PDN copied to the clipboard");
    } catch (error) {
      toast(`Could not copy: ${error.message}`, "error");
    }
  };
  // A plain link would not send the token: the PDN is fetched, then saved from memory.
  const download = h("a", {
    class: "button primary",
    href: pdnUrl,
    download: `game-${id}.pdn`,
    text: "Download PDN",
    onClick: async (event) => {
      if (download.href.startsWith("blob:")) return;
      event.preventDefault();
      try {
        if (!pdnText.value) pdnText.value = await fetchPdn(pdnUrl);
        const blob = new Blob([pdnText.value], { type: "application/x-pdn" });
        download.href = URL.createObjectURL(blob);
        download.click();
      } catch (error) {
        toast(`Could not download: ${error.message}`, "error");
      }
    },
  });
  const result =
    game.status === "playing"
      ? "Game in progress"
      : viewerColour
        ? describeOutcomeFor(game, viewerColour)
        : describeOutcome(game);

  // One line of title and facts, so that the board and its step buttons fit a laptop's window.
  mount(
    main,
    h(
      "div",
      { class: "replay-page" },
      h(
        "div",
        { class: "table-head" },
        h("h1", {}, `${game.black || "?"} – ${game.white || "?"}`),
        h(
          "p",
          { class: "muted" },
          `${variantName(game.variant)} · ${gameClockText(game)} · `,
          game.room || (game.source === "import" ? "imported" : "live"),
          ` · ${formatDate(game.started_at)}`,
        ),
      ),
      h("p", {
        class: "banner replay-result",
        "data-testid": "result",
        // The viewer's own game: a winner's or a loser's banner.
        "data-outcome": (viewerColour && outcomeFor(game, viewerColour)) || "neutral",
        text: `${result} ${game.result !== "*" ? `(${game.result})` : ""}`,
      }),
      h(
        "div",
        { class: "game-layout" },
        h(
          "div",
          { class: "board-area" },
          topBar,
          board.element,
          bottomBar,
          controls,
          h("div", { class: "toolbar view-tools" }, labelsSwitch(board)),
          status,
        ),
        h(
          "aside",
          { class: "side-panel" },
          h(
            "section",
            { class: "panel" },
            h("h2", { text: "Moves" }),
            list,
            h("p", {
              class: "muted",
              text: `Use ← and → to step, Home and End to jump.${hasClocks ? " Each move shows the mover's time left." : ""}`,
            }),
          ),
          analysis.element,
          h(
            "section",
            { class: "panel" },
            h("h2", { text: "PDN" }),
            h(
              "div",
              { class: "toolbar" },
              download,
              h("button", { type: "button", onClick: copy, text: "Copy PDN" }),
            ),
            h(
              "details",
              {
                onToggle: async (e) =>
                  e.target.open && !pdnText.value && (pdnText.value = await fetchPdn(pdnUrl)),
              },
              h("summary", { text: "Show PDN" }),
              pdnText,
            ),
          ),
          h(
            "section",
            { class: "panel" },
            h("h2", { text: "Players" }),
            h(
              "ul",
              {},
              game.black
                ? h(
                    "li",
                    {},
                    "Black: ",
                    h("a", {
                      href: `#/players/${encodeURIComponent(game.black)}`,
                      text: game.black,
                    }),
                    ...ratedSide(game.black_rating),
                  )
                : null,
              game.white
                ? h(
                    "li",
                    {},
                    "White: ",
                    h("a", {
                      href: `#/players/${encodeURIComponent(game.white)}`,
                      text: game.white,
                    }),
                    ...ratedSide(game.white_rating),
                  )
                : null,
            ),
          ),
        ),
      ),
    ),
  );
  go(ply);
  analysis.start((p) => ((p - 1 + (startTurn === "white" ? 1 : 0)) % 2 === 0 ? "black" : "white"));
  return () => {
    analysis.stop();
    document.removeEventListener("keydown", onKey);
    if (download.href.startsWith("blob:")) URL.revokeObjectURL(download.href);
  };
}

async function fetchPdn(url) {
  const token = getToken();
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const response = await fetch(url, { headers });
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  return response.text();
}

/** Copy a textarea's text: the async clipboard API where allowed, else the selection. */
async function copyText(textarea) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(textarea.value);
    return;
  }
  textarea.closest("details").open = true;
  textarea.select();
  if (!document.execCommand("copy")) throw new Error("the browser refused");
}

// The replay viewer: a finished (or live) game from the archive, stepped with buttons or arrow
// keys; PDN download and copy. Positions come from the server (`?positions=true`). A game of a
// private table is its players' (the token goes with every request) or opened by the table's
// invite code (`#/games/31?invite=CODE`).

import { api, getToken, query } from "./api.js";
import { Board } from "./board.js";
import { gameClockText } from "./archive.js";
import { formatDate, h, mount, setTitle, toast } from "./dom.js";
import { renderMoveList } from "./movelist.js";
import { describeOutcome, parseFen, variantName } from "./notation.js";

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
  let ply = moves.length;

  const board = new Board({ label: `Game ${id} replay` });
  const list = h("ol", { class: "move-list", "aria-label": "Moves" });
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
    h("button", {
      type: "button",
      onClick: () => board.set({ flipped: !board.state.flipped }),
      text: "Flip board",
    }),
    counter,
  );

  function go(target) {
    ply = Math.max(0, Math.min(moves.length, target));
    const fen = positions[ply] || game.start_position;
    board.set({ fen, lastMove: ply > 0 ? moves[ply - 1] : null });
    renderMoveList(list, { moves, startTurn, current: ply, onPick: go });
    counter.textContent = `Move ${ply} of ${moves.length}`;
    status.textContent = ply > 0 ? `Move ${ply}: ${moves[ply - 1]}` : "Start position";
  }

  const onKey = (event) => {
    if (event.target.closest("input, textarea, select")) return;
    const actions = { ArrowLeft: ply - 1, ArrowRight: ply + 1, Home: 0, End: moves.length };
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
  const result = game.status === "playing" ? "Game in progress" : describeOutcome(game);

  mount(
    main,
    h("h1", {}, `${game.black || "?"} – ${game.white || "?"}`),
    h(
      "p",
      { class: "muted" },
      `${variantName(game.variant)} · ${gameClockText(game)} · `,
      game.room || (game.source === "import" ? "imported" : "live"),
      ` · ${formatDate(game.started_at)}`,
    ),
    h("p", {
      class: "banner",
      "data-testid": "result",
      text: `${result} ${game.result !== "*" ? `(${game.result})` : ""}`,
    }),
    h(
      "div",
      { class: "game-layout" },
      h("div", { class: "board-area" }, board.element, controls, status),
      h(
        "aside",
        { class: "side-panel" },
        h(
          "section",
          { class: "panel" },
          h("h2", { text: "Moves" }),
          list,
          h("p", { class: "muted", text: "Use ← and → to step, Home and End to jump." }),
        ),
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
                  h("a", { href: `#/players/${encodeURIComponent(game.black)}`, text: game.black }),
                )
              : null,
            game.white
              ? h(
                  "li",
                  {},
                  "White: ",
                  h("a", { href: `#/players/${encodeURIComponent(game.white)}`, text: game.white }),
                )
              : null,
          ),
        ),
      ),
    ),
  );
  go(ply);
  return () => {
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

// The archive: finished and live games with filters, paged by the server's cursor.

import { api, query } from "./api.js";
import { formatDate, formatTimeControl, h, mount, setTitle } from "./dom.js";
import { describeOutcome, outcomeFor, resultFor, variantName } from "./notation.js";
import { diffBadge, ratingBadge } from "./ratings.js";
import { session } from "./session.js";

const PAGE_SIZE = 50;

const TERMINATIONS = [
  "no_moves",
  "resignation",
  "timeout",
  "agreement",
  "repetition",
  "move_limit",
  "kings_endgame",
  "abandoned",
  "aborted",
  "admin",
];

export async function render(main, _params, search) {
  setTitle("Game archive");
  const filters = Object.fromEntries(search.entries());
  const field = (name, label, control) => {
    control.name = name;
    control.value = filters[name] || "";
    return h("label", {}, label, control);
  };
  const options = (pairs) => pairs.map(([value, text]) => h("option", { value, text }));
  const form = h(
    "form",
    { class: "panel", role: "search", "aria-label": "Filter games", onSubmit: (e) => apply(e) },
    h(
      "div",
      { class: "form-row" },
      field("player", "Player", h("input", { type: "search", autocomplete: "off" })),
      field("opponent", "Opponent", h("input", { type: "search", autocomplete: "off" })),
      field(
        "variant",
        "Variant",
        h(
          "select",
          {},
          options([
            ["", "Any"],
            ["english", "English draughts"],
            ["pool", "Pool checkers"],
          ]),
        ),
      ),
      field(
        "result",
        "Result",
        h(
          "select",
          {},
          options([
            ["", "Any"],
            ["1-0", "Black won (1-0)"],
            ["0-1", "White won (0-1)"],
            ["1/2-1/2", "Draw"],
            ["*", "Unfinished"],
          ]),
        ),
      ),
      field(
        "termination",
        "Ended by",
        h(
          "select",
          {},
          options([["", "Any"], ...TERMINATIONS.map((t) => [t, t.replace(/_/g, " ")])]),
        ),
      ),
      field("since", "From", h("input", { type: "date" })),
      field("until", "To", h("input", { type: "date" })),
      h("button", { type: "submit", class: "primary", text: "Search" }),
    ),
  );

  function apply(event) {
    event.preventDefault();
    const values = Object.fromEntries(new FormData(form).entries());
    location.hash = `#/games${query(values)}`;
  }

  const body = h("tbody");
  const status = h("p", { class: "muted", "aria-live": "polite" });
  const more = h("button", { type: "button", hidden: true, text: "More games" });
  let cursor = null;

  async function load() {
    more.disabled = true;
    status.textContent = "Loading…";
    try {
      const page = await api.get(`/api/games${query({ ...filters, limit: PAGE_SIZE, cursor })}`);
      const games = page.data || [];
      // Results are told from the side of the player searched for, else from the viewer's.
      const side = filters.player || (session.user && session.user.name) || null;
      body.append(...games.map((game) => gameRow(game, side)));
      cursor = page.next_cursor || null;
      more.hidden = !cursor;
      const shown = body.children.length;
      status.textContent =
        shown === 0
          ? "No game matches these filters."
          : page.count != null
            ? `${shown} of ${page.count_exact === false ? "about " : ""}${page.count} games`
            : `${shown} games`;
    } catch (error) {
      status.textContent = error.message;
      status.className = "error-text";
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener("click", load);

  mount(main, h("h1", { text: "Game archive" }), form, gamesTable("Games", body), status, more);
  await load();
  return null;
}

/** The time control of an archived game: "5+3" or "untimed". */
export function gameClockText(game) {
  return game.clock ? formatTimeControl(game.clock.base_s, game.clock.increment_s) : "untimed";
}

function playerLink(name) {
  return name ? h("a", { href: `#/players/${encodeURIComponent(name)}`, text: name }) : "?";
}

/** A player's rating before a rated game and what the game did to it ("(1500?) +241"). */
export function ratedSide(rating) {
  return rating ? [ratingBadge(rating), " ", diffBadge(rating.diff)] : [];
}

/** The list of games shared by the archive and player pages; rows go into `body`. */
export function gamesTable(caption, body) {
  return h(
    "div",
    { class: "table-scroll" },
    h(
      "table",
      { class: "list games-list" },
      h("caption", { class: "visually-hidden", text: caption }),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["Game", "Black", "White", "Result", "Variant", "Moves", "Date"].map((t) =>
            h("th", { scope: "col", text: t }),
          ),
        ),
      ),
      body,
    ),
  );
}

/**
 * One archive row; the result cell says why the game ended, as a win, loss or draw of player
 * `side` (a name) when they played it, else neutrally with the PDN result.
 */
export function gameRow(game, side = null) {
  const colour =
    side && game.black && game.black.toLowerCase() === side.toLowerCase()
      ? "black"
      : side && game.white && game.white.toLowerCase() === side.toLowerCase()
        ? "white"
        : null;
  const finished = game.status !== "playing";
  const result = !finished
    ? "playing"
    : colour
      ? resultFor(game, colour)
      : `${describeOutcome(game).replace(/\.$/, "")} (${game.result})`;
  const outcome = colour ? outcomeFor(game, colour) : null;
  return h(
    "tr",
    { dataset: { game: String(game.id) } },
    h(
      "td",
      {},
      h("a", {
        href: `#/games/${game.id}`,
        "aria-label": `Replay game ${game.id}`,
        text: `#${game.id}`,
      }),
    ),
    h("td", {}, playerLink(game.black), ...ratedSide(game.black_rating)),
    h("td", {}, playerLink(game.white), ...ratedSide(game.white_rating)),
    h("td", {
      class: "result",
      dataset: { outcome: outcome || "" },
      title: finished ? `${describeOutcome(game)} (${game.result})` : "",
      text: result,
    }),
    h("td", { text: `${variantName(game.variant)} ${gameClockText(game)}` }),
    h("td", { text: String(Math.ceil((game.ply_count || 0) / 2)) }),
    h("td", { text: formatDate(game.started_at) }),
  );
}

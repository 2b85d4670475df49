// The leaderboards: the best players of each variant and time-control category, among those
// with an established rating who played a rated game there in the last 7 days.

import { api, query } from "./api.js";
import { formatDate, h, mount, setTitle } from "./dom.js";
import { variantName } from "./notation.js";
import { CATEGORIES, categoryName } from "./ratings.js";

const VARIANTS = ["english", "pool"];

export async function render(main, _params, search) {
  const variant = VARIANTS.includes(search.get("variant")) ? search.get("variant") : "english";
  const category = CATEGORIES.includes(search.get("category"))
    ? search.get("category")
    : "blitz";
  const title = `${variantName(variant)} ${categoryName(category)} leaderboard`;
  setTitle("Leaderboards");
  const link = (v, c, text) =>
    h("a", {
      class: "button",
      href: `#/leaderboard${query({ variant: v, category: c })}`,
      "aria-current": v === variant && c === category ? "page" : false,
      text,
    });
  const picker = h(
    "nav",
    { class: "leaderboard-picker", "aria-label": "Leaderboards" },
    VARIANTS.map((v) =>
      h(
        "div",
        { class: "toolbar" },
        h("strong", { text: variantName(v) }),
        CATEGORIES.map((c) => link(v, c, categoryName(c))),
      ),
    ),
  );
  const status = h("p", { class: "muted", "aria-live": "polite", text: "Loading…" });
  const body = h("tbody");
  mount(
    main,
    h("h1", { text: "Leaderboards" }),
    picker,
    h("h2", { text: title }),
    h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        { class: "list leaderboard" },
        h("caption", { class: "visually-hidden", text: title }),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Rank", "Player", "Rating", "Games", "Last rated game"].map((t) =>
              h("th", { scope: "col", text: t }),
            ),
          ),
        ),
        body,
      ),
    ),
    status,
    h("p", {
      class: "muted",
      text:
        "Players appear once their rating is established (deviation 75 or less) and drop off " +
        "after 7 days without a rated game in the category.",
    }),
  );
  try {
    const board = await api.get(`/api/leaderboard${query({ variant, category, limit: 100 })}`);
    const rows = board.data || [];
    body.append(
      ...rows.map((e) =>
        h(
          "tr",
          { dataset: { rank: String(e.rank) } },
          h("td", { text: String(e.rank) }),
          h(
            "td",
            {},
            h("a", { href: `#/players/${encodeURIComponent(e.name)}`, text: e.name }),
          ),
          h("td", { class: "rating-value", text: String(e.rating) }),
          h("td", { text: String(e.games) }),
          h("td", { text: formatDate(e.last_game_at) }),
        ),
      ),
    );
    status.textContent = rows.length ? "" : "Nobody is on this leaderboard yet.";
  } catch (error) {
    status.textContent = error.message;
    status.className = "error-text";
  }
  return null;
}

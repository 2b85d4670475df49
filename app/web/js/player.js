// A player's page: their ratings and rating history, their record per variant and their
// recent games; a Challenge button for a registered visitor (not on their own page, nor for the
// computer); on their own page, their settings (takebacks).

import { api, query } from "./api.js";
import { formatDate, h, mount, setTitle } from "./dom.js";
import { variantName } from "./notation.js";
import { gameRow, gamesTable } from "./archive.js";
import { openChallengeDialog } from "./challenges.js";
import { mayChallenge } from "./online.js";
import { categoryName, ratingChart, ratingText } from "./ratings.js";
import { session } from "./session.js";

const PAGE_SIZE = 30;

export async function render(main, { name }) {
  setTitle(name);
  mount(main, h("h1", { text: name }), h("p", { class: "muted", text: "Loading…" }));
  let profile;
  try {
    profile = await api.get(`/api/players/${encodeURIComponent(name)}`);
  } catch (error) {
    mount(
      main,
      h("h1", { text: name }),
      h("p", { class: "error-text", role: "alert", text: error.message }),
    );
    return null;
  }
  const variants = Object.entries(profile.variants || {});
  const ratings = profile.ratings || [];
  // The history only matters once there are ratings; a failure leaves the charts out.
  const history = ratings.length
    ? await api
        .get(`/api/players/${encodeURIComponent(name)}/rating-history`)
        .then((body) => body.data || [])
        .catch(() => [])
    : [];
  const body = h("tbody");
  const more = h("button", { type: "button", hidden: true, text: "More games" });
  const status = h("p", { class: "muted", "aria-live": "polite" });
  let cursor = null;
  async function load() {
    more.disabled = true;
    try {
      const page = await api.get(
        `/api/players/${encodeURIComponent(name)}/games${query({ limit: PAGE_SIZE, cursor, count: false })}`,
      );
      const games = page.data || [];
      body.append(...games.map((game) => gameRow(game, profile.name)));
      cursor = page.next_cursor || null;
      more.hidden = !cursor;
      status.textContent = body.children.length ? "" : "No games yet.";
    } catch (error) {
      status.textContent = error.message;
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener("click", load);
  const challenge = h("button", {
    type: "button",
    class: "primary",
    hidden: true,
    onClick: () => openChallengeDialog({ name: profile.name, kind: profile.kind }),
    text: "Challenge",
  });
  // The player's own settings, shown on their own page only.
  const settings = h("div");
  let settingsOf = null;
  // The profile has no id: the signed-in user is told apart by name (names ignore case).
  const stopUser = session.subscribe((user) => {
    const self = Boolean(user && user.name.toLowerCase() === profile.name.toLowerCase());
    challenge.hidden = self || !mayChallenge({ id: null, kind: profile.kind });
    if (self && settingsOf !== user.id) settingsSection(settings);
    else if (!self) settings.replaceChildren();
    settingsOf = self ? user.id : null;
  });

  mount(
    main,
    h(
      "div",
      { class: "toolbar" },
      h(
        "h1",
        {},
        profile.name,
        profile.kind === "guest" ? h("span", { class: "muted", text: " (guest)" }) : null,
      ),
      challenge,
    ),
    h(
      "p",
      { class: "muted" },
      `Member since ${formatDate(profile.created_at)}`,
      profile.last_seen_at ? ` · last seen ${formatDate(profile.last_seen_at)}` : "",
      ` · ${profile.games} games · `,
      h("a", { href: `#/games${query({ player: profile.name })}`, text: "search their games" }),
    ),
    settings,
    ratingsSection(profile.name, ratings, history),
    variants.length
      ? h(
          "div",
          { class: "table-scroll" },
          h(
            "table",
            { class: "list" },
            h("caption", { class: "visually-hidden", text: "Record per variant" }),
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ["Variant", "Games", "Wins", "Losses", "Draws", "Playing"].map((t) =>
                  h("th", { scope: "col", text: t }),
                ),
              ),
            ),
            h(
              "tbody",
              {},
              variants.map(([variant, s]) =>
                h(
                  "tr",
                  {},
                  h("th", { scope: "row", text: variantName(variant) }),
                  [s.games, s.wins, s.losses, s.draws, s.playing].map((n) =>
                    h("td", { text: String(n ?? 0) }),
                  ),
                ),
              ),
            ),
          ),
        )
      : null,
    h("h2", { text: "Games" }),
    gamesTable(`Games of ${profile.name}`, body),
    status,
    more,
  );
  await load();
  return stopUser;
}

/** The signed-in player's settings (`/api/account/preferences`): whether takebacks may be asked
 * in their games. */
async function settingsSection(box) {
  const takebacks = h("input", {
    type: "checkbox",
    name: "takebacks",
    disabled: true,
    "aria-describedby": "takebacks-help",
  });
  const status = h("p", { class: "muted", role: "status" });
  mount(
    box,
    h(
      "section",
      { class: "panel settings", "aria-labelledby": "settings-title" },
      h("h2", { id: "settings-title", text: "Your settings" }),
      h("label", { class: "inline" }, takebacks, "Allow takebacks in casual games"),
      h("p", {
        id: "takebacks-help",
        class: "muted",
        text: "Off: nobody may ask you to take back a move, you may not ask either, and the tables you open allow none.",
      }),
      status,
    ),
  );
  try {
    takebacks.checked = (await api.get("/api/account/preferences")).takebacks;
  } catch (error) {
    status.textContent = error.message;
    return;
  }
  takebacks.disabled = false;
  takebacks.addEventListener("change", async () => {
    takebacks.disabled = true;
    try {
      const now = await api.patch("/api/account/preferences", { takebacks: takebacks.checked });
      takebacks.checked = now.takebacks;
      status.textContent = now.takebacks ? "Saved: takebacks allowed." : "Saved: takebacks off.";
    } catch (error) {
      takebacks.checked = !takebacks.checked;
      status.textContent = error.message;
    } finally {
      takebacks.disabled = false;
    }
  });
}

/** The player's ratings per variant and category, then one history chart per rating. */
function ratingsSection(name, ratings, history) {
  if (!ratings.length) {
    return h("p", { class: "muted ratings-none", text: `${name} has played no rated game yet.` });
  }
  const label = (r) => `${variantName(r.variant)} ${categoryName(r.category)}`;
  return h(
    "section",
    { class: "ratings", "aria-labelledby": "ratings-title" },
    h(
      "h2",
      { id: "ratings-title" },
      "Ratings ",
      h("a", { class: "small", href: "#/leaderboard", text: "leaderboards" }),
    ),
    h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        { class: "list ratings-list" },
        h("caption", { class: "visually-hidden", text: "Ratings per variant and category" }),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Category", "Rating", "Games", "Deviation"].map((t) =>
              h("th", { scope: "col", text: t }),
            ),
          ),
        ),
        h(
          "tbody",
          {},
          ratings.map((r) =>
            h(
              "tr",
              { dataset: { variant: r.variant, category: r.category } },
              h("th", { scope: "row", text: label(r) }),
              h("td", {
                class: "rating-value",
                title: r.provisional ? "Provisional: too few recent rated games" : "",
                text: ratingText(r),
              }),
              h("td", { text: String(r.games) }),
              h("td", { text: `±${Math.round(r.rd)}` }),
            ),
          ),
        ),
      ),
    ),
    history
      .filter((line) => (line.points || []).length)
      .map((line) =>
        h(
          "figure",
          { class: "panel rating-history", dataset: { variant: line.variant, category: line.category } },
          h("figcaption", { text: `${label(line)}: rating at the end of each day played` }),
          ratingChart(line.points, `${label(line)} rating history`),
        ),
      ),
  );
}

// The tournaments page: upcoming ones (soonest first, counting down to their start), running and
// finished ones (latest first), each linking to its page and read again every few seconds while
// the tab is visible; and, for a registered player or an administrator, the form that creates
// one (`tournamentform.js`).

import { api } from "./api.js";
import { formatDate, h, mount, redraw, setTitle } from "./dom.js";
import { session } from "./session.js";
import { tournamentForm } from "./tournamentform.js";
import { TournamentTimes, settingsLine } from "./tournamentwords.js";

const REFRESH_MS = 5000;

const SECTIONS = [
  ["upcoming", "Upcoming", "No tournament is scheduled."],
  ["running", "Running", "No tournament is being played."],
  ["finished", "Finished", "No tournament has finished yet."],
];

export async function render(main) {
  setTitle("Tournaments");
  const times = new TournamentTimes();
  let lists = null;
  const status = h("p", { class: "muted", "aria-live": "polite", text: "Loading…" });
  const boxes = Object.fromEntries(SECTIONS.map(([key]) => [key, h("div")]));
  const create = h("div");

  mount(
    main,
    h("h1", { text: "Tournaments" }),
    status,
    SECTIONS.map(([key, title]) =>
      h(
        "section",
        { class: "panel", "aria-labelledby": `tournaments-${key}`, dataset: { section: key } },
        h("h2", { id: `tournaments-${key}`, text: title }),
        boxes[key],
      ),
    ),
    create,
  );

  /** When a tournament is, in words: its countdown, its time left, its round, its end. */
  function when(t) {
    if (t.status === "finished" || t.status === "cancelled") {
      const at = t.finished_at ? ` ${formatDate(new Date(t.finished_at).toISOString())}` : "";
      return `${t.status}${at}`;
    }
    return times.text(t);
  }

  function row(t) {
    return h(
      "tr",
      { dataset: { tournament: String(t.id) } },
      // Three columns, so that a phone shows the countdown without scrolling sideways.
      h(
        "td",
        {},
        h("a", { href: `#/tournaments/${t.id}`, text: t.name }),
        h("span", { class: "settings muted", text: settingsLine(t) }),
      ),
      h("td", { class: "number-cell", text: String(t.players) }),
      h("td", { class: "when", dataset: { when: String(t.id) }, text: when(t) }),
    );
  }

  function draw() {
    for (const [key, title, empty] of SECTIONS) {
      const rows = lists[key] || [];
      redraw(
        boxes[key],
        rows.length
          ? h(
              "div",
              { class: "table-scroll" },
              h(
                "table",
                { class: "list tournaments-list" },
                h("caption", { class: "visually-hidden", text: `${title} tournaments` }),
                h(
                  "thead",
                  {},
                  h(
                    "tr",
                    {},
                    ["Tournament", "Players", "When"].map((text) =>
                      h("th", { scope: "col", text }),
                    ),
                  ),
                ),
                h("tbody", {}, rows.map(row)),
              ),
            )
          : h("p", { class: "muted", text: empty }),
      );
    }
  }

  let loading = false;
  async function load() {
    if (loading || document.visibilityState !== "visible") return;
    loading = true;
    try {
      lists = await api.get("/api/tournaments");
      for (const t of [...lists.upcoming, ...lists.running]) times.note(t);
      status.textContent = "";
      status.className = "muted";
      draw();
    } catch (error) {
      status.textContent = error.message;
      status.className = "error-text";
    } finally {
      loading = false;
    }
  }

  /** The countdowns move on every second, between two reads of the list. */
  function tick() {
    if (!lists) return;
    const byId = new Map([...lists.upcoming, ...lists.running].map((t) => [String(t.id), t]));
    for (const cell of main.querySelectorAll("td[data-when]")) {
      const t = byId.get(cell.dataset.when);
      if (t) cell.textContent = when(t);
    }
  }

  let formFor = null; // whom the form on screen is for: "id role"
  const showForm = (user) => {
    const key = user ? `${user.id} ${user.role}` : null;
    if (formFor === key && key !== null) return;
    formFor = key;
    if (!user || user.kind !== "registered") {
      mount(
        create,
        h("p", {
          class: "muted",
          text: "Registered players may create tournaments: sign in with an account to create one.",
        }),
      );
      return;
    }
    mount(
      create,
      h(
        "section",
        { class: "panel", "aria-labelledby": "tournament-create" },
        h("h2", { id: "tournament-create", text: "Create a tournament" }),
        h("p", {
          class: "muted",
          text:
            "An arena pairs its players again as soon as their games end, for the minutes it " +
            "lasts; a Swiss plays a set number of rounds, pairing equal scores; a round robin " +
            "(up to 12 players) pairs everyone with everyone.",
        }),
        tournamentForm({
          admin: user.role === "admin",
          onDone: (t) => {
            location.hash = `#/tournaments/${t.id}`;
          },
        }),
      ),
    );
  };

  const onVisible = () => document.visibilityState === "visible" && load();
  document.addEventListener("visibilitychange", onVisible);
  const refresher = setInterval(load, REFRESH_MS);
  const ticker = setInterval(tick, 1000);
  const unsubscribe = session.subscribe(showForm);
  await load();
  return () => {
    clearInterval(refresher);
    clearInterval(ticker);
    document.removeEventListener("visibilitychange", onVisible);
    unsubscribe();
  };
}

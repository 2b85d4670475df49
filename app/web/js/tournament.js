// A tournament's page: its settings and where it stands (the countdown to its start, an arena's
// time left, a Swiss's or round robin's round), Join and Withdraw (an arena's Pause), the
// standings, the games in progress to watch, the rounds played and, once it is over, the podium;
// its creator and administrators may change it before the start or cancel it.
//
// The page follows the tournament over the socket (`follow_tournament`) and reads it again each
// time the server says it changed (at most once a second), with a slow poll behind. What is
// drawn the same is kept (dom.js's `redraw`), so a click or the keyboard focus is never lost to a
// refresh: every handler reads the page's state when it runs.

import { api } from "./api.js";
import { h, mount, redraw, setTitle, toast } from "./dom.js";
import { live } from "./live.js";
import { noteTournament } from "./mytournaments.js";
import { requireUser, session } from "./session.js";
import { tournamentForm } from "./tournamentform.js";
import {
  TournamentTimes,
  creatorText,
  playersText,
  scoreText,
  settingsLine,
} from "./tournamentwords.js";

// The server tells the page when the tournament changes (`follow_tournament`); it reads it again
// then, at most once every READ_GAP_MS. A slow poll stays, every POLL_MS while the socket is
// open and every REFRESH_MS while it is not.
const READ_GAP_MS = 1000;
const POLL_MS = 15000;
const REFRESH_MS = 2000;
const PLACES = ["1st", "2nd", "3rd"];
const RESULTS = { "1-0": "1-0", "0-1": "0-1", "1/2-1/2": "½-½" };

/** A refusal to join or withdraw, in words. */
function refusal(err) {
  return (
    {
      rated_needs_account:
        "This tournament is rated: rated games are for registered accounts. Sign up to join it.",
      banned: "A banned account plays in no tournament.",
    }[err.code] || `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.`
  );
}

function playerLink(name) {
  return name ? h("a", { href: `#/players/${encodeURIComponent(name)}`, text: name }) : "?";
}

function isMe(name) {
  const user = session.user;
  return Boolean(user && name && user.name.toLowerCase() === name.toLowerCase());
}

export async function render(main, { id }) {
  const times = new TournamentTimes();
  let t = null; // the tournament as last read
  let shown = 0; // the number of the request whose answer is on screen
  let asked = 0;
  let confirming = false; // "Cancel the tournament?" asked
  let editing = false;
  let stopped = false;

  const title = h("h1", { text: "Tournament" });
  const settings = h("p", { class: "muted" });
  const clock = h("p", { class: "tournament-clock", role: "timer", "aria-live": "off" });
  const actions = h("div", { class: "toolbar tournament-actions" });
  const error = h("p", { class: "error-text", role: "alert" });
  const editBox = h("div");
  const podium = h("div");
  const standings = h("div");
  const playing = h("div");
  const rounds = h("div");

  mount(
    main,
    title,
    settings,
    clock,
    actions,
    error,
    editBox,
    podium,
    h(
      "section",
      { class: "panel", "aria-labelledby": "standings-title" },
      h("h2", { id: "standings-title", text: "Standings" }),
      standings,
    ),
    h(
      "section",
      { class: "panel", "aria-labelledby": "playing-title" },
      h("h2", { id: "playing-title", text: "Games in progress" }),
      playing,
      h(
        "p",
        {},
        h("a", { href: `#/games?tournament=${id}`, text: "All its games in the archive" }),
      ),
    ),
    rounds,
  );

  /** Read the tournament (or take an action's answer); draw it unless a later one is shown. */
  async function read(request) {
    const number = ++asked;
    const answer = await request();
    if (stopped || number < shown) return;
    shown = number;
    t = answer;
    times.note(t);
    noteTournament(t, session.user && session.user.name);
    draw();
  }

  let polling = false; // a read in flight: a slow server is not asked again meanwhile
  let again = false; // told of a change during that read: read once more after it
  let lastRead = 0;
  async function poll(always = false) {
    if (stopped || (!always && document.visibilityState !== "visible")) return;
    if (polling) {
      again = again || always;
      return;
    }
    polling = true;
    lastRead = Date.now();
    try {
      await read(() => api.get(`/api/tournaments/${id}`));
    } catch (err) {
      if (err.status === 404) notFound();
      // else: the next poll tries again
    } finally {
      polling = false;
      if (again) {
        again = false;
        soon();
      }
    }
  }

  let readTimer = null;
  /** A change was announced: read it, no sooner than READ_GAP_MS after the last read. */
  function soon() {
    if (stopped || readTimer) return;
    const wait = Math.max(0, lastRead + READ_GAP_MS - Date.now());
    readTimer = setTimeout(() => {
      readTimer = null;
      poll(true);
    }, wait);
  }

  /** The fallback poll: often while the socket is down, seldom while it brings the changes. */
  function slowPoll() {
    const every = live.state === "open" ? POLL_MS : REFRESH_MS;
    if (Date.now() - lastRead >= every - 100) poll();
  }

  const follow = () =>
    live.send({ type: "follow_tournament", tournament: id }, (err) => {
      if (err.code === "not_found") notFound();
    });
  const offNotice = live.on("tournament", (message) => message.id === id && soon());
  const offWelcome = live.on("welcome", follow); // followed again on every (re)connection

  async function act(verb) {
    error.textContent = "";
    try {
      await read(() => api.post(`/api/tournaments/${id}/${verb}`));
    } catch (err) {
      error.textContent = refusal(err);
    }
  }

  async function join() {
    const user = await requireUser("Sign in, register or play as a guest to join.");
    if (user) await act("join");
  }

  async function cancel() {
    const field = actions.querySelector("input[name=cancel-reason]");
    const reason = field ? field.value.trim() : "";
    confirming = false;
    error.textContent = "";
    try {
      await read(() => api.post(`/api/tournaments/${id}/cancel`, reason ? { reason } : {}));
    } catch (err) {
      error.textContent = refusal(err);
    }
    toast(t && t.status === "cancelled" ? "The tournament is cancelled." : "Not cancelled.");
  }

  function edit() {
    if (!t || editing) return;
    editing = true;
    error.textContent = "";
    const close = () => {
      editing = false;
      mount(editBox);
      draw();
    };
    mount(
      editBox,
      h(
        "section",
        { class: "panel", "aria-labelledby": "tournament-edit" },
        h("h2", { id: "tournament-edit", text: "Change the tournament" }),
        tournamentForm({
          tournament: t,
          admin: Boolean(session.user && session.user.role === "admin"),
          label: "Change the tournament",
          submitText: "Save changes",
          startsIn: () => Math.max(0, Math.round(times.untilStart(t) / 1000)),
          onDone: (answer) => {
            read(async () => answer);
            toast("The tournament is changed.");
            close();
          },
          onClose: close,
        }),
      ),
    );
    draw();
    editBox.querySelector("input[name=name]").focus();
  }

  function notFound() {
    stopped = true;
    setTitle("Tournament not found");
    mount(
      main,
      h("h1", { text: "Tournament not found" }),
      h(
        "p",
        {},
        `There is no tournament ${id}. `,
        h("a", { href: "#/tournaments", text: "See the tournaments" }),
      ),
    );
  }

  function draw() {
    setTitle(t.name);
    title.textContent = t.name;
    settings.textContent = [settingsLine(t), playersText(t.players), creatorText(t)]
      .filter(Boolean)
      .join(" · ");
    tick();
    drawActions();
    drawPodium();
    drawStandings();
    drawPlaying();
    drawRounds();
  }

  function tick() {
    if (!t) return;
    const text = times.text(t);
    clock.textContent = text.charAt(0).toUpperCase() + text.slice(1);
    clock.dataset.status = t.status;
  }

  function drawActions() {
    const over = t.status === "finished" || t.status === "cancelled";
    const user = session.user;
    const row = user && t.standings.find((r) => isMe(r.name));
    const mine = Boolean(user && (user.role === "admin" || user.id === t.created_by));
    const buttons = [];
    const button = (text, onClick, cls = "") =>
      h("button", { type: "button", class: cls, onClick, text });
    if (!over) {
      if (row && row.active !== false) {
        const pause = t.kind === "arena" && t.status === "started";
        buttons.push(button(pause ? "Pause" : "Withdraw", () => act("withdraw")));
      } else if (row && t.kind === "arena") {
        buttons.push(button("Join again", join, "primary"));
      } else if (row) {
        buttons.push(h("span", { class: "muted", text: "You withdrew." }));
      } else if (t.kind !== "round_robin" || t.status === "created") {
        buttons.push(button("Join", join, "primary"));
      }
    }
    if (mine && t.status === "created" && !editing) buttons.push(button("Edit", edit));
    if (mine && !over) {
      if (confirming) {
        buttons.push(
          h("span", {
            class: "notice",
            text: "Cancel this tournament? Games in progress play on.",
          }),
          // Drawn anew the same each time: `redraw` keeps the one typed in.
          h("input", {
            name: "cancel-reason",
            maxlength: "200",
            placeholder: "Why (shown on this page)",
            "aria-label": "Reason for cancelling",
          }),
          button("Confirm cancelling", cancel, "danger"),
          button("Keep it", () => {
            confirming = false;
            drawActions();
          }),
        );
      } else {
        buttons.push(
          button(
            "Cancel tournament",
            () => {
              confirming = true;
              drawActions();
            },
            "danger",
          ),
        );
      }
    }
    redraw(actions, buttons);
  }

  function drawPodium() {
    const places = t.status === "finished" ? t.podium || [] : [];
    redraw(
      podium,
      places.length
        ? h(
            "section",
            { class: "panel", "aria-labelledby": "podium-title" },
            h("h2", { id: "podium-title", text: "Podium" }),
            h(
              "ol",
              { class: "podium" },
              places.map((r, i) =>
                h(
                  "li",
                  { dataset: { place: String(i + 1) } },
                  h("span", { class: "place", text: PLACES[i] }),
                  " ",
                  playerLink(r.name),
                  " ",
                  h("span", {
                    class: "muted",
                    text: `${scoreText(r.score)} ${r.score === 1 ? "point" : "points"}`,
                  }),
                ),
              ),
            ),
          )
        : null,
    );
  }

  function drawStandings() {
    const arena = t.kind === "arena";
    const headings = arena
      ? ["Rank", "Player", "Score", "Games", "Points per game", "Performance"]
      : ["Rank", "Player", "Score", "Games", "Sonneborn–Berger", "Buchholz"];
    if (!t.standings.length) {
      redraw(standings, h("p", { class: "muted", text: "Nobody has joined yet." }));
      return;
    }
    const rows = t.standings.map((r) => {
      const away =
        r.active === false
          ? h("span", { class: "muted", text: arena ? " (paused)" : " (withdrew)" })
          : null;
      const fire = r.fire
        ? h("span", {
            class: "fire",
            role: "img",
            "aria-label": "on fire",
            title: "On fire: two wins running, the next win scores double",
            text: " 🔥",
          })
        : null;
      const cells = arena
        ? [
            h("td", { class: "sheet", text: (r.sheet || []).join(" ") }),
            h("td", { text: r.games >= 3 && r.performance ? String(r.performance) : "" }),
          ]
        : [
            h("td", { text: scoreText(r.sonneborn_berger ?? 0) }),
            h("td", { text: scoreText(r.buchholz ?? 0) }),
          ];
      return h(
        "tr",
        {
          dataset: { player: r.name, rank: String(r.rank) },
          "aria-current": isMe(r.name) ? "true" : false,
        },
        h("td", { text: String(r.rank) }),
        h("td", {}, playerLink(r.name), fire, away),
        h("td", { class: "score", text: scoreText(r.score) }),
        h("td", { text: String(r.games) }),
        ...cells,
      );
    });
    redraw(
      standings,
      h(
        "div",
        { class: "table-scroll" },
        h(
          "table",
          { class: "list standings" },
          h("caption", { class: "visually-hidden", text: "Standings" }),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              headings.map((text) => h("th", { scope: "col", text })),
            ),
          ),
          h("tbody", {}, rows),
        ),
      ),
    );
  }

  function drawPlaying() {
    const games = t.playing || [];
    redraw(
      playing,
      games.length
        ? h(
            "ul",
            { class: "tournament-games" },
            games.map((g) =>
              h(
                "li",
                { dataset: { table: String(g.table) } },
                h("a", {
                  href: `#/table/${g.table}`,
                  text: `Watch table ${g.table}: ${g.black || "?"} (Black) – ${g.white || "?"} (White)`,
                }),
                g.round ? h("span", { class: "muted", text: ` · round ${g.round}` }) : null,
                g.opening ? h("span", { class: "muted", text: ` · opening ${g.opening}` }) : null,
              ),
            ),
          )
        : h("p", { class: "muted", text: "No game is being played." }),
    );
  }

  function drawRounds() {
    const played = t.rounds_played || [];
    if (!played.length) {
      redraw(rounds);
      return;
    }
    // The latest round first: it is the one being played.
    const list = played
      .map((games, i) => ({ number: i + 1, games }))
      .reverse()
      .map(({ number, games }) =>
        h(
          "div",
          { class: "round", dataset: { round: String(number) } },
          h("h3", { text: `Round ${number}` }),
          games.length
            ? h(
                "ul",
                {},
                games.map((g) =>
                  h(
                    "li",
                    {},
                    playerLink(g.black),
                    " – ",
                    playerLink(g.white),
                    ": ",
                    h("a", {
                      href: `#/games/${g.game}`,
                      text: RESULTS[g.result] || "playing",
                      "aria-label": `Game ${g.game}: ${RESULTS[g.result] || "playing"}`,
                    }),
                    g.match_game
                      ? h("span", {
                          class: "muted",
                          text: ` · game ${g.match_game} of 2${g.opening ? `, ${g.opening}` : ""}`,
                        })
                      : null,
                  ),
                ),
              )
            : h("p", { class: "muted", text: "No game in this round." }),
        ),
      );
    redraw(
      rounds,
      h(
        "section",
        { class: "panel", "aria-labelledby": "rounds-title" },
        h("h2", { id: "rounds-title", text: "Rounds" }),
        list,
      ),
    );
  }

  const onVisible = () => document.visibilityState === "visible" && poll();
  document.addEventListener("visibilitychange", onVisible);
  const refresher = setInterval(slowPoll, REFRESH_MS);
  const ticker = setInterval(tick, 1000);
  // A sign-in or sign-out changes the buttons.
  const unsubscribe = session.subscribe(() => t && !stopped && drawActions());
  setTitle("Tournament");
  clock.textContent = "Loading…";
  live.ensure();
  if (live.state === "open") follow();
  await poll(true);
  return () => {
    stopped = true;
    offNotice();
    offWelcome();
    if (live.state === "open") live.send({ type: "unfollow_tournament", tournament: id });
    clearTimeout(readTimer);
    clearInterval(refresher);
    clearInterval(ticker);
    document.removeEventListener("visibilitychange", onVisible);
    unsubscribe();
  };
}

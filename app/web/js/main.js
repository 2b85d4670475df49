// Entry point: hash routing between the pages. Each page is `render(container, params, query)`
// returning an optional cleanup function, called when the user navigates away.

import { forgetChallenges, startChallenges } from "./challenges.js";
import { askOnce, notifySwitch } from "./desktop.js";
import { h, mount, setTitle, toast } from "./dom.js";
import { startInbox } from "./inbox.js";
import { live } from "./live.js";
import { announce, forgetMyGames, startMyGames } from "./mygames.js";
import { forgetMyTournaments, startMyTournaments } from "./mytournaments.js";
import { prefs } from "./prefs.js";
import { mountAccountBar, session } from "./session.js";
import { muteSwitch } from "./sound.js";

const routes = [
  [/^\/?$/, () => import("./lobby.js"), () => ({})],
  [/^\/room\/([^/]+)$/, () => import("./lobby.js"), (m) => ({ room: decodeURIComponent(m[1]) })],
  [/^\/table\/(\d+)$/, () => import("./game.js"), (m) => ({ table: Number(m[1]) })],
  [/^\/games$/, () => import("./archive.js"), () => ({})],
  [/^\/games\/(\d+)$/, () => import("./replay.js"), (m) => ({ game: Number(m[1]) })],
  [
    /^\/players\/([^/]+)$/,
    () => import("./player.js"),
    (m) => ({ name: decodeURIComponent(m[1]) }),
  ],
  [/^\/leaderboard$/, () => import("./leaderboard.js"), () => ({})],
  [/^\/tournaments$/, () => import("./tournaments.js"), () => ({})],
  [/^\/tournaments\/(\d+)$/, () => import("./tournament.js"), (m) => ({ id: Number(m[1]) })],
  [/^\/analysis$/, () => import("./analysisboard.js"), () => ({})],
  [/^\/puzzles$/, () => import("./puzzles.js"), () => ({})],
  [/^\/puzzles\/(\d+)$/, () => import("./puzzles.js"), (m) => ({ id: Number(m[1]) })],
  [/^\/inbox$/, () => import("./inbox.js"), () => ({})],
  [/^\/admin$/, () => import("./admin.js"), () => ({})],
];

let cleanup = null;
let navigation = 0;
let firstRoute = true;

async function route() {
  const main = document.getElementById("main");
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, search = ""] = hash.split("?");
  const query = new URLSearchParams(search);
  const id = ++navigation;
  if (cleanup) {
    cleanup();
    cleanup = null;
  }
  markCurrentLink(path);
  // Each page renders into a container of its own: a page still loading when the user moves on
  // then fills a detached element instead of overwriting the next page.
  const container = h("div", { class: "page" });
  for (const [pattern, load, params] of routes) {
    const match = path.match(pattern);
    if (!match) continue;
    const page = await load();
    if (id !== navigation) return;
    mount(main, container);
    setTitle("");
    // Every page opens at its top.
    window.scrollTo(0, 0);
    if (!firstRoute) main.focus({ preventScroll: true });
    firstRoute = false;
    const stop = (await page.render(container, params(match), query)) || null;
    if (id === navigation) cleanup = stop;
    else if (stop) stop();
    return;
  }
  mount(
    main,
    h("h1", { text: "Page not found" }),
    h(
      "p",
      {},
      "Nothing lives at this address. ",
      h("a", { href: "#/", text: "Back to the lobby" }),
    ),
  );
}

function markCurrentLink(path) {
  for (const link of document.querySelectorAll(".site-header nav a")) {
    const target = link.getAttribute("href").replace(/^#/, "");
    const current =
      target === "/" ? path === "/" || path.startsWith("/room") : path.startsWith(target);
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

mountAccountBar(document.getElementById("account"));
// The page-wide notices sit under the header, however many lines it wraps to.
const header = document.querySelector(".site-header");
new ResizeObserver(() => {
  document.documentElement.style.setProperty("--header-height", `${header.offsetHeight}px`);
}).observe(header);
const inboxSlot = h("span", { class: "inbox" });
header.append(inboxSlot, muteSwitch(), notifySwitch());
startInbox(inboxSlot);
// The board and piece colours chosen, for every board.
const applyThemes = () => {
  document.documentElement.dataset.board = prefs.board;
  document.documentElement.dataset.pieces = prefs.pieces;
};
applyThemes();
prefs.subscribe(applyThemes);
// Browser notifications: the permission is asked once, at a signed-in user's first click.
window.addEventListener("pointerdown", () => session.user && askOnce(), { capture: true });
startMyGames(document.getElementById("notify"));
startChallenges(document.getElementById("challenges"));
startMyTournaments();
window.addEventListener("hashchange", route);
live.on("token_refused", ({ message }) => {
  session.set(null);
  forgetMyGames();
  forgetChallenges();
  forgetMyTournaments();
  toast(`Signed out: ${message}`, "error");
  // A ban (or a removal) says why, and stays on the page until dismissed.
  if (/^banned/i.test(message)) announce(`You were signed out: ${message}`, "error");
});
session.load().then(() => {
  // From now on a sign-in or sign-out reconnects the live socket with the new token.
  let user = session.user;
  session.subscribe((next) => {
    if ((next && next.id) !== (user && user.id)) {
      forgetMyGames();
      forgetChallenges();
      forgetMyTournaments();
      live.restart();
    }
    user = next;
  });
  // A signed-in user is connected on every page: a game of theirs may start at any time.
  if (session.user) live.ensure();
  route();
});

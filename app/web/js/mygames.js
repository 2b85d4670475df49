// The user's own games, followed on every page: the tables where they play a game in progress
// stay watched in the background (the server counts a watched seat as attended), and the user is
// told, wherever they are in the client, when a game of theirs starts and when it becomes their
// move while they look at another page (and when it ends): a sound, a flag in the window title
// and a banner with a link to the table. "Your move" is told once per game until the user comes
// back to its table: an opponent moving again meanwhile adds nothing. A game the user asked for
// (a quick-pairing seek, a challenge, a tournament's pairing: `expectGame`) takes them to its
// table instead, with the game's start sound.

import { notify } from "./desktop.js";
import { flagTitle, h, mount } from "./dom.js";
import { live } from "./live.js";
import { describeOutcomeFor } from "./notation.js";
import { play } from "./sound.js";

/** table id -> {table, game, colour, opponent, turn, ply, release, told, started} (`told`: the
 * game's "your move" was announced and its table not visited since; `started`: the game whose
 * start was announced, or known when the page connected) */
const games = new Map();
const listeners = new Set();
const expected = new Set(); // predicates on `your_game`: a game the user asked for
let bar = null;
let shown = null; // {table, key} of the banner on screen

/** The user's games in progress, [{table, game, colour, opponent}], newest last. */
export function myGames() {
  return [...games.values()];
}

/** Call `fn` whenever the list of games in progress changes; returns an unsubscribe function. */
export function onMyGames(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/**
 * Take the user to the table of the next game that `match(your_game)` says they asked for (a
 * seek, a challenge), instead of announcing it; returns a function that stops expecting.
 */
export function expectGame(match) {
  expected.add(match);
  return () => expected.delete(match);
}

function changed() {
  for (const fn of listeners) fn(myGames());
}

/** The table whose page is on screen, if any. */
function tableOnScreen() {
  const match = location.hash.match(/^#\/table\/(\d+)/);
  return match ? Number(match[1]) : null;
}

function colourOf(game) {
  const user = live.user;
  if (!user || !game) return null;
  if (game.black && game.black.id === user.id) return "black";
  if (game.white && game.white.id === user.id) return "white";
  return null;
}

/** Start following (in the background) a game of the user's at `table`. */
function follow(table, info) {
  let entry = games.get(table);
  if (!entry) {
    const release = live.watchTable(table, () => {}, { quiet: true });
    entry = { table, release, told: false };
    games.set(table, entry);
  }
  if (info.game !== undefined && info.game !== entry.game) entry.told = false;
  Object.assign(entry, info);
  changed();
  return entry;
}

function forget(table) {
  const entry = games.get(table);
  if (!entry) return;
  games.delete(table);
  entry.release();
  if (shown && shown.table === table) hideBanner();
  changed();
}

function fromSnapshot(table, game) {
  const colour = colourOf(game);
  if (!colour || game.status !== "playing") {
    forget(table);
    return null;
  }
  const opponent = game[colour === "black" ? "white" : "black"];
  return follow(table, {
    game: game.id,
    colour,
    opponent,
    turn: game.turn,
    ply: game.ply,
  });
}

function onMessage(message) {
  switch (message.type) {
    case "welcome":
      for (const table of [...games.keys()]) {
        if (!(live.playing || []).some((p) => p.table === table)) forget(table);
      }
      for (const { table, game } of live.playing || []) follow(table, { game, started: game });
      break;
    case "your_game": {
      // Fresh unless this game's start was told already: the table's own `game_started` may
      // come first (a table still watched as the user left its page) and is no announcement.
      const fresh = games.get(message.table)?.started !== message.game;
      // A new game makes the end of an earlier one old news (told here, played elsewhere).
      if (fresh && shown && String(shown.key).startsWith("end-")) hideBanner();
      if (fresh) {
        const against = message.opponent ? ` against ${message.opponent.name}` : "";
        const body = `Table ${message.table}: you play ${message.colour}${against}.`;
        notify("Your game has started", body, {
          href: `#/table/${message.table}`,
          tag: `game-${message.game}`,
        });
      }
      follow(message.table, {
        started: message.game,
        game: message.game,
        colour: message.colour,
        opponent: message.opponent,
        turn: "black",
        ply: 0,
      });
      if (fresh && [...expected].some((match) => match(message))) {
        if (tableOnScreen() !== message.table) {
          // The table page opens on a game already started: its start sound is played here.
          play("start");
          location.hash = `#/table/${message.table}`;
        }
      } else if (fresh && tableOnScreen() !== message.table) {
        const against = message.opponent ? ` against ${message.opponent.name}` : "";
        tell(message.table, `game-${message.game}`, `Your game${against} has started.`, "start");
      }
      break;
    }
    case "table":
      if (message.game) fromSnapshot(message.table.id, message.game);
      else forget(message.table.id);
      break;
    case "game_started":
      fromSnapshot(message.table, message.game);
      break;
    case "move": {
      const entry = games.get(message.table);
      if (!entry || entry.game !== message.game || message.ply <= (entry.ply ?? -1)) return;
      entry.ply = message.ply;
      entry.turn = message.turn;
      changed();
      // A hidden tab is told by the browser, this table's page on screen or not.
      if (message.turn === entry.colour)
        notify("Your move", `Table ${entry.table}: your opponent played ${message.move}.`, {
          href: `#/table/${entry.table}`,
          tag: `move-${entry.game}`,
        });
      if (message.turn === entry.colour && tableOnScreen() !== entry.table && !entry.told) {
        entry.told = true;
        tell(entry.table, `move-${entry.game}-${entry.ply}`, "It is your move.", "notice");
      }
      break;
    }
    case "game_ended": {
      const entry = games.get(message.table);
      forget(message.table);
      if (entry && entry.game === message.game && tableOnScreen() !== message.table) {
        const words = describeOutcomeFor(message, entry.colour || null);
        tell(message.table, `end-${message.game}`, `Game over. ${words}`, "end");
      }
      break;
    }
    case "table_closed":
      forget(message.table);
      break;
    case "kicked":
      if (typeof message.table === "number") forget(message.table);
      break;
    default:
  }
}

/** Sound, title flag and banner for something at `table`, unless that table is on screen. */
function tell(table, key, text, sound) {
  play(sound);
  flagTitle({ start: "Your game!", end: "Game over!" }[sound] || "Your move!");
  shown = { table, key };
  const link = h("a", {
    href: `#/table/${table}`,
    onClick: () => hideBanner(),
    text: `Go to table ${table}`,
  });
  mount(
    bar,
    h(
      "div",
      { class: "notify-box", dataset: { table: String(table) } },
      h("span", { text: `Table ${table}: ${text} ` }),
      link,
      h("button", {
        type: "button",
        class: "close",
        "aria-label": "Dismiss",
        onClick: () => hideBanner(),
        text: "×",
      }),
    ),
  );
  bar.hidden = false;
}

function hideBanner() {
  shown = null;
  flagTitle("");
  if (bar) {
    bar.hidden = true;
    mount(bar);
  }
}

/**
 * Show a lasting message in the banner (e.g. why the user was signed out); it stays until
 * dismissed.
 */
export function announce(text, kind = "info") {
  shown = { table: null, key: text };
  mount(
    bar,
    h(
      "div",
      { class: "notify-box", dataset: { kind } },
      h("span", { text }),
      h("button", {
        type: "button",
        class: "close",
        "aria-label": "Dismiss",
        onClick: () => hideBanner(),
        text: "×",
      }),
    ),
  );
  bar.hidden = false;
}

/** Start following the user's games; `element` is the page-wide banner. */
export function startMyGames(element) {
  bar = element;
  bar.hidden = true;
  live.on("*", onMessage);
  // Coming to the table the banner points at answers it.
  window.addEventListener("hashchange", () => {
    const onScreen = tableOnScreen();
    if (games.has(onScreen)) games.get(onScreen).told = false;
    if (shown && shown.table !== null && onScreen === shown.table) hideBanner();
  });
}

/** Stop following every game (the user signed out). */
export function forgetMyGames() {
  for (const table of [...games.keys()]) forget(table);
}

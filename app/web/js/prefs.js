// The viewer's choices, remembered in localStorage: sound on or off, how the board's squares
// are labelled (the checkers convention, square numbers 1–32, or chess coordinates a–h/1–8),
// the board's and the pieces' colours, and browser notifications on or off.

const MUTED_KEY = "checkers.muted";
const LABELS_KEY = "checkers.labels";
const BOARD_KEY = "checkers.board";
const PIECES_KEY = "checkers.pieces";
const NOTIFY_KEY = "checkers.notify";
const NOTIFY_ASKED_KEY = "checkers.notify.asked";

/** Board colours: each keeps its pieces at 3:1 or more from the dark squares, in both schemes. */
export const BOARD_THEMES = { green: "Green", wood: "Wood", blue: "Blue" };
export const PIECE_THEMES = { classic: "Classic", contrast: "High contrast" };

const listeners = new Set();

function read(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null; // storage refused (private mode): the defaults hold
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // Not remembered, still applied for this page.
  }
  for (const fn of listeners) fn();
}

export const prefs = {
  get muted() {
    return read(MUTED_KEY) === "1";
  },
  set muted(value) {
    write(MUTED_KEY, value ? "1" : "0");
  },
  /** "numbers" (the default) or "coordinates". */
  get labels() {
    return read(LABELS_KEY) === "coordinates" ? "coordinates" : "numbers";
  },
  set labels(value) {
    write(LABELS_KEY, value === "coordinates" ? "coordinates" : "numbers");
  },
  get board() {
    const value = read(BOARD_KEY);
    return value in BOARD_THEMES ? value : "green";
  },
  set board(value) {
    write(BOARD_KEY, value in BOARD_THEMES ? value : "green");
  },
  get pieces() {
    const value = read(PIECES_KEY);
    return value in PIECE_THEMES ? value : "classic";
  },
  set pieces(value) {
    write(PIECES_KEY, value in PIECE_THEMES ? value : "classic");
  },
  /** Browser notifications while the tab is hidden: on unless switched off. */
  get notify() {
    return read(NOTIFY_KEY) !== "0";
  },
  set notify(value) {
    write(NOTIFY_KEY, value ? "1" : "0");
  },
  /** The browser's permission was asked for once already. */
  get notifyAsked() {
    return read(NOTIFY_ASKED_KEY) === "1";
  },
  set notifyAsked(value) {
    write(NOTIFY_ASKED_KEY, value ? "1" : "0");
  },
  /** Call `fn` after every change; returns an unsubscribe function. */
  subscribe(fn) {
    listeners.add(fn);
    return () => listeners.delete(fn);
  },
};

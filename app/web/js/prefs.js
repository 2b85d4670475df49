// The viewer's choices, remembered in localStorage: sound on or off, and how the board's squares
// are labelled (the checkers convention, square numbers 1–32, or chess coordinates a–h/1–8).

const MUTED_KEY = "checkers.muted";
const LABELS_KEY = "checkers.labels";

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
  /** Call `fn` after every change; returns an unsubscribe function. */
  subscribe(fn) {
    listeners.add(fn);
    return () => listeners.delete(fn);
  },
};

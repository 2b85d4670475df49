// The tournaments the user plays in, as this tab knows them (joined here, or seen on their page
// with the user in them; kept in sessionStorage, so a reload keeps them): while one of them is not
// over, a game of theirs that starts is their next pairing, and it takes them to its table at once
// with the start sound (mygames.js's `expectGame`, as for a seek or a challenge).
//
// `your_game` names the tournament a game belongs to (`tournament`): a game of one of these
// tournaments is the user's next pairing. The joined tournaments are read again now and then,
// so that one which ended while its page was closed is forgotten.

import { api } from "./api.js";
import { expectGame } from "./mygames.js";

const KEY = "checkers.tournaments";
const CHECK_MS = 30000;

/** tournament id -> the user's name when they joined it */
const joined = new Map(readStored());

function readStored() {
  try {
    const stored = JSON.parse(sessionStorage.getItem(KEY) || "[]");
    return Array.isArray(stored) ? stored.filter((entry) => Array.isArray(entry)) : [];
  } catch {
    return [];
  }
}

function store() {
  try {
    sessionStorage.setItem(KEY, JSON.stringify([...joined]));
  } catch {
    // Storage refused (a private window): remembered for this page only.
  }
}

/** Whether `name` plays in `t` (a tournament as the server sends it) and has not left it. */
export function playsIn(t, name) {
  const lower = name && name.toLowerCase();
  const row = lower && (t.standings || []).find((r) => r.name.toLowerCase() === lower);
  return Boolean(row && row.active !== false);
}

/**
 * What the server says of a tournament (after a join, a withdrawal or a read): remember it while
 * `name` plays in it and it is not over, else forget it.
 */
export function noteTournament(t, name) {
  const over = t.status === "finished" || t.status === "cancelled";
  const before = joined.has(t.id);
  if (!over && name && playsIn(t, name)) joined.set(t.id, name);
  else joined.delete(t.id);
  if (before !== joined.has(t.id)) store();
}

/** Forget every tournament (the user signed out, or another signed in). */
export function forgetMyTournaments() {
  joined.clear();
  store();
}

async function check() {
  if (!joined.size || document.visibilityState !== "visible") return;
  for (const [id, name] of [...joined]) {
    try {
      noteTournament(await api.get(`/api/tournaments/${id}`), name);
    } catch (error) {
      if (error.status === 404) {
        joined.delete(id);
        store();
      }
    }
  }
}

/** Start taking the user to the tables of their tournaments' games. */
export function startMyTournaments() {
  expectGame((notice) => notice.tournament != null && joined.has(notice.tournament));
  setInterval(check, CHECK_MS);
}

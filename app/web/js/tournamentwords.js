// A tournament in words, for the tournaments' list, a tournament's page and the admin page: its
// kind, its settings on one line, a score, and where it stands in time ("starts in 4:59",
// "12:30 left", "Round 2 of 5"), counted down without asking the server again.

import { formatTimeControl } from "./dom.js";
import { live } from "./live.js";
import { variantName } from "./notation.js";

/** The kinds as [value, name] pairs, in the order the forms offer them. */
export const KINDS = [
  ["arena", "Arena"],
  ["swiss", "Swiss"],
  ["round_robin", "Round robin"],
];

export function kindName(kind) {
  const found = KINDS.find(([value]) => value === kind);
  return found ? found[1] : kind;
}

/** "3+2" (minutes + seconds). */
export function clockText(t) {
  return t.clock ? formatTimeControl(t.clock.base, t.clock.increment) : "untimed";
}

/** "Arena · English draughts · 3+2 · rated". */
export function settingsLine(t) {
  const parts = [kindName(t.kind), variantName(t.variant), clockText(t)];
  parts.push(t.rated ? "rated" : "casual");
  if (t.ballot === "3-move") parts.push("3-move ballot");
  if (t.double) parts.push("double");
  return parts.join(" · ");
}

/** Who made it: "by ann", or "scheduled" for the site's recurring ones. */
export function creatorText(t) {
  if (t.created_by_name) return `by ${t.created_by_name}`;
  return t.every_minutes ? `scheduled every ${t.every_minutes} min` : "";
}

export function playersText(count) {
  return count === 1 ? "1 player" : `${count} players`;
}

/** A score in points, halves as ½: "2", "1½", "½". */
export function scoreText(score) {
  if (Number.isInteger(score)) return String(score);
  const whole = Math.floor(score);
  return `${whole || ""}½`;
}

/** A span of time to come: "4:59", "1:02:03", "3 days". */
export function countdownText(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const days = Math.floor(total / 86400);
  if (days >= 2) return `${days} days`;
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const ss = String(total % 60).padStart(2, "0");
  return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${ss}` : `${minutes}:${ss}`;
}

/** The server's time now (Unix ms): from the live socket while it is open (its pongs keep the
 * offset), else this machine's. */
function serverNow() {
  return live.state === "open" ? live.serverNow() : Date.now();
}

/**
 * Keeps, per tournament, when it starts on this page's clock (`starts_in` is the server's count
 * of seconds, so no clock needs to agree), and says where each stands now.
 */
export class TournamentTimes {
  constructor() {
    this.starts = new Map(); // id -> Date.now() at the start
  }

  /** Note the tournament as just read from the server. */
  note(t) {
    if (t.status !== "created") {
      this.starts.delete(t.id);
      return;
    }
    const start = Date.now() + (t.starts_in || 0) * 1000;
    const known = this.starts.get(t.id);
    // A second's rounding is no news: the countdown on screen does not jump back and forth.
    if (known === undefined || Math.abs(known - start) > 1500) this.starts.set(t.id, start);
  }

  /** Milliseconds until the start of a tournament not yet started. */
  untilStart(t) {
    const start = this.starts.get(t.id);
    return start === undefined ? (t.starts_in || 0) * 1000 : start - Date.now();
  }

  /** Where the tournament stands: "starts in 4:59", "12:30 left", "Round 2 of 5",
   * "finished"… */
  text(t) {
    if (t.status === "created") {
      const left = this.untilStart(t);
      return left > 0 ? `starts in ${countdownText(left)}` : "starting…";
    }
    if (t.status === "cancelled") return t.cancel_reason ? `cancelled: ${t.cancel_reason}` : "cancelled";
    if (t.status === "finished") return "finished";
    if (t.kind === "arena") {
      const left = (t.ends_at || 0) - serverNow();
      return left > 0 ? `${countdownText(left)} left` : "last games being played";
    }
    if (!t.round) return "starting…";
    return `Round ${t.round} of ${t.rounds ?? "?"}`;
  }
}

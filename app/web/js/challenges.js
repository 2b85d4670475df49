// Challenges, on every page: the ones made to the user (a banner with Accept and Decline, a
// sound, and a flag in the window title while the tab is hidden), the ones they made (waiting,
// with Cancel; a decline with its reason in words), and the form that makes one. The waiting ones
// are read from `GET /api/challenge` whenever the socket (re)connects, so a challenge made while
// the page was closed is shown too. An accepted challenge takes both players to the table.

import { api } from "./api.js";
import { notify } from "./desktop.js";
import { flagTitle, formatTimeControl, h, mount, titleFlagText, toast } from "./dom.js";
import { live } from "./live.js";
import { expectGame } from "./mygames.js";
import { VARIANTS, variantName } from "./notation.js";
import { play } from "./sound.js";

/** Lichess's decline reasons (the server's `DECLINE_REASONS`), in the words shown for them. */
export const DECLINE_REASONS = {
  generic: "I'm not accepting challenges at the moment.",
  later: "This is not the right time for me, please ask again later.",
  tooFast: "This time control is too fast for me, please challenge again with a slower game.",
  tooSlow: "This time control is too slow for me, please challenge again with a faster game.",
  timeControl: "I'm not accepting challenges with this time control.",
  rated: "Please send me a rated challenge instead.",
  casual: "Please send me a casual challenge instead.",
  standard: "I'm not accepting variant challenges right now.",
  variant: "I'm not willing to play this variant right now.",
  noBot: "I'm not accepting challenges from bots.",
  onlyBot: "I'm only accepting challenges from bots.",
};

/** The reasons as the challenged player picks them. */
const REASON_LABELS = {
  generic: "Not now",
  later: "Later, please",
  tooFast: "Too fast",
  tooSlow: "Too slow",
  timeControl: "Not this clock",
  rated: "Rated only",
  casual: "Casual only",
  standard: "No variants",
  variant: "Not this variant",
  noBot: "No bots",
  onlyBot: "Bots only",
};

/** The clocks a challenge offers: the quick-pairing pools' and a few longer ones, then days
 * per move (correspondence: a base of whole days). */
export const CLOCK_PRESETS = [
  [60, 0],
  [180, 2],
  [300, 3],
  [600, 5],
  [900, 10],
  [1800, 0],
  [86400, 0],
  [3 * 86400, 0],
  [7 * 86400, 0],
];

const FLAG = "Challenge!";
const incoming = new Map(); // id -> challenge made to the user, waiting
const outgoing = new Map(); // id -> challenge the user made, waiting
const answered = new Map(); // id -> the user's challenge that was declined (until dismissed)
const accepting = new Set(); // challengers whose challenge the user has just accepted
const errors = new Map(); // id -> why answering failed
let area = null;
let loading = 0;
let heard = null; // while a read of the list is on its way: the socket's changes since it left

function me() {
  return live.user;
}

/** Words for a challenge's terms: "English draughts · 5+3 · rated". */
function terms(challenge) {
  const clock = challenge.clock
    ? formatTimeControl(challenge.clock.base, challenge.clock.increment)
    : "untimed";
  return `${variantName(challenge.variant)} · ${clock} · ${challenge.rated ? "rated" : "casual"}`;
}

/** Who plays which colour, said to `side` ("challenger" or "dest"). */
function colours(challenge, side) {
  if (challenge.colour === "random") return "colours by lot";
  const challengers = challenge.colour === "black" ? "Black" : "White";
  const other = challenge.colour === "black" ? "White" : "Black";
  return side === "challenger" ? `you play ${challengers}` : `you play ${other}`;
}

/**
 * Read the waiting challenges again (at connect and after a game starts). What the socket says
 * while the read is on its way is newer than its answer: a challenge made, or one answered,
 * after the server read the list. Those changes are kept and applied again over the answer, so
 * a challenge that arrives just after connecting is not wiped out by the older list.
 */
async function reload() {
  const seq = ++loading;
  if (!me()) {
    heard = null;
    clearAll();
    return;
  }
  heard = [];
  let body;
  try {
    body = await api.get("/api/challenge");
  } catch {
    if (seq === loading) heard = null;
    return; // shown again at the next reconnect
  }
  if (seq !== loading) return;
  const since = heard || [];
  heard = null;
  const fresh = (body.in || []).filter((c) => !incoming.has(c.id));
  incoming.clear();
  outgoing.clear();
  for (const c of body.in || []) incoming.set(c.id, c);
  for (const c of body.out || []) outgoing.set(c.id, c);
  for (const message of since) apply(message);
  if (fresh.length) alert(fresh);
  draw();
}

function clearAll() {
  incoming.clear();
  outgoing.clear();
  answered.clear();
  accepting.clear();
  draw();
}

/**
 * Challenges came in: a sound, and while nobody looks at the tab the title flagged and a
 * browser notification.
 */
function alert(challenges) {
  play("challenge");
  if (document.hidden) flagTitle(FLAG);
  const names = challenges.map((c) => c.challenger.name).join(", ");
  notify("Challenge!", `${names} challenge${challenges.length > 1 ? "" : "s"} you.`, {
    tag: "challenge",
  });
}

function unflag() {
  if (titleFlagText() === FLAG) flagTitle("");
}

/** A change the socket told: to the lists. False if it was not one. */
function apply(message) {
  const c = message.challenge;
  switch (message.type) {
    case "challenge":
      if (!incoming.has(c.id)) {
        incoming.set(c.id, c);
        return "new";
      }
      return true;
    case "challenge_sent":
      outgoing.set(c.id, c);
      return true;
    case "challenge_declined":
      incoming.delete(c.id);
      if (outgoing.delete(c.id) || (me() && c.challenger.id === me().id)) {
        answered.set(c.id, c);
        return "declined";
      }
      return true;
    case "challenge_canceled":
      outgoing.delete(c.id);
      return incoming.delete(c.id) ? "withdrawn" : true;
    default:
      return false;
  }
}

function onMessage(message) {
  if (message.type === "welcome") {
    reload();
    draw();
    return;
  }
  if (message.type === "your_game") {
    // After `expectGame` has seen it: the challenge that started this game no longer waits.
    queueMicrotask(() => {
      if (message.opponent) accepting.delete(message.opponent.id);
      reload();
    });
    return;
  }
  const change = apply(message);
  if (!change) return;
  if (heard) heard.push(message);
  const c = message.challenge;
  if (change === "new") alert([c]);
  else if (change === "declined") play("notice");
  else if (change === "withdrawn") toast(`${c.challenger.name} withdrew their challenge.`);
  draw();
}

function send(message, id) {
  errors.delete(id);
  const sent = live.send(message, (err) => {
    if (message.type === "challenge_accept") accepting.clear();
    errors.set(id, err.message);
    // One that no longer waits is gone: read the list again.
    if (err.code === "not_found") reload();
    draw();
  });
  if (!sent) errors.set(id, "Not connected to the server; try again in a moment.");
  draw();
}

function incomingBox(c) {
  const reason = h(
    "select",
    { "aria-label": `Reason to decline ${c.challenger.name}'s challenge` },
    Object.entries(DECLINE_REASONS).map(([value, words]) =>
      h("option", { value, title: words, text: REASON_LABELS[value] }),
    ),
  );
  return h(
    "div",
    { class: "notify-box challenge-box", dataset: { challenge: String(c.id), direction: "in" } },
    h(
      "span",
      {},
      h("a", {
        href: `#/players/${encodeURIComponent(c.challenger.name)}`,
        text: c.challenger.name,
      }),
      ` challenges you: ${terms(c)} · ${colours(c, "dest")}.`,
    ),
    errors.has(c.id) ? h("span", { class: "challenge-error", text: errors.get(c.id) }) : null,
    h("button", {
      type: "button",
      class: "accept",
      onClick: () => {
        accepting.add(c.challenger.id);
        send({ type: "challenge_accept", challenge: c.id }, c.id);
      },
      text: "Accept",
    }),
    reason,
    h("button", {
      type: "button",
      onClick: () =>
        send({ type: "challenge_decline", challenge: c.id, reason: reason.value }, c.id),
      text: "Decline",
    }),
  );
}

function outgoingBox(c) {
  return h(
    "div",
    { class: "notify-box challenge-box", dataset: { challenge: String(c.id), direction: "out" } },
    h(
      "span",
      {},
      `Your challenge to ${c.dest.name} (${terms(c)} · ${colours(c, "challenger")}): `,
      "waiting for an answer…",
    ),
    errors.has(c.id) ? h("span", { class: "challenge-error", text: errors.get(c.id) }) : null,
    h("button", {
      type: "button",
      onClick: () => send({ type: "challenge_cancel", challenge: c.id }, c.id),
      text: "Cancel",
    }),
  );
}

function declinedBox(c) {
  const reason = DECLINE_REASONS[c.decline_reason] || DECLINE_REASONS.generic;
  return h(
    "div",
    {
      class: "notify-box challenge-box",
      dataset: { challenge: String(c.id), direction: "declined", kind: "error" },
    },
    h("span", { text: `${c.dest.name} declined your challenge: “${reason}”` }),
    h("button", {
      type: "button",
      class: "close",
      "aria-label": "Dismiss",
      onClick: () => {
        answered.delete(c.id);
        draw();
      },
      text: "×",
    }),
  );
}

/** Drop the challenges whose time is up (the server lets them expire without a word). */
function prune() {
  const now = live.serverNow();
  let gone = false;
  for (const map of [incoming, outgoing]) {
    for (const [id, c] of map) {
      if (c.expires_at <= now) {
        map.delete(id);
        if (map === outgoing) toast(`Your challenge to ${c.dest.name} expired unanswered.`);
        gone = true;
      }
    }
  }
  if (gone) draw();
}

function draw() {
  if (!area) return;
  mount(
    area,
    [...incoming.values()].map(incomingBox),
    [...outgoing.values()].map(outgoingBox),
    [...answered.values()].map(declinedBox),
  );
  area.hidden = !area.children.length;
  if (!incoming.size) unflag();
}

/** Start following the user's challenges; `element` is the page-wide area they show in. */
export function startChallenges(element) {
  area = element;
  area.hidden = true;
  live.on("*", onMessage);
  // The game of a challenge the user made or accepted opens at once.
  expectGame(
    (game) =>
      Boolean(game.opponent) &&
      (accepting.has(game.opponent.id) ||
        [...outgoing.values()].some((c) => c.dest.id === game.opponent.id)),
  );
  document.addEventListener("visibilitychange", () => !document.hidden && unflag());
  setInterval(prune, 5000);
}

/** Forget every challenge (the user signed out). */
export function forgetChallenges() {
  loading += 1;
  clearAll();
}

/**
 * The form that challenges `target` ({name, kind}): variant, clock (a preset or untimed), the
 * challenger's colour and rated; rated only between registered accounts, and the form says why.
 */
export function openChallengeDialog(target) {
  const user = me();
  const error = h("p", { class: "error-text", role: "alert" });
  const variant = h(
    "select",
    { name: "variant" },
    VARIANTS.map(([value, text]) => h("option", { value, text })),
  );
  const clock = h(
    "select",
    { name: "clock" },
    CLOCK_PRESETS.map(([base, increment]) =>
      h("option", {
        value: `${base}+${increment}`,
        text: formatTimeControl(base, increment),
        selected: base === 300,
      }),
    ),
    h("option", { value: "", text: "Untimed" }),
  );
  const colour = h(
    "select",
    { name: "colour" },
    h("option", { value: "random", text: "By lot" }),
    h("option", { value: "black", text: "Black (moves first)" }),
    h("option", { value: "white", text: "White" }),
  );
  const ratedAllowed = user && user.kind === "registered" && target.kind !== "guest";
  const rated = h("input", {
    type: "checkbox",
    name: "rated",
    disabled: !ratedAllowed,
    "aria-describedby": "challenge-rated-help",
  });
  const why = target.kind === "guest" ? `: ${target.name} plays as a guest` : "";
  const help = h("p", {
    id: "challenge-rated-help",
    class: "muted",
    text: ratedAllowed
      ? "A rated game moves both players' ratings."
      : `Rated games are for registered accounts on both sides${why}.`,
  });
  const submit = h("button", { type: "submit", class: "primary", text: "Send the challenge" });
  let stop = () => {};
  const dialog = h(
    "dialog",
    {
      class: "challenge-dialog",
      "aria-labelledby": "challenge-title",
      onClose: () => {
        stop();
        dialog.remove();
      },
    },
    h(
      "form",
      {
        onSubmit: (event) => {
          event.preventDefault();
          error.textContent = "";
          const [base, increment] = clock.value ? clock.value.split("+").map(Number) : [];
          const message = {
            type: "challenge",
            user: target.name,
            variant: variant.value,
            clock: !clock.value
              ? null
              : base >= 86400
                ? { days: base / 86400 }
                : { base, increment },
            colour: colour.value,
            rated: rated.checked,
          };
          stop();
          stop = live.on("challenge_sent", (reply) => {
            if (reply.challenge.dest.name.toLowerCase() !== target.name.toLowerCase()) return;
            dialog.close();
            toast(`Challenge sent to ${target.name}.`);
          });
          const sent = live.send(message, (err) => {
            stop();
            error.textContent = challengeRefusal(err, target.name);
          });
          if (!sent) {
            stop();
            error.textContent = "Not connected to the server; try again in a moment.";
          }
        },
      },
      h("h2", { id: "challenge-title", text: `Challenge ${target.name}` }),
      h(
        "div",
        { class: "form-row" },
        h("label", {}, "Variant", variant),
        h("label", {}, "Clock", clock),
        h("label", {}, "Your colour", colour),
      ),
      h("label", { class: "inline" }, rated, "Rated"),
      help,
      error,
      h(
        "div",
        { class: "toolbar" },
        submit,
        h("button", { type: "button", onClick: () => dialog.close(), text: "Cancel" }),
      ),
    ),
  );
  document.body.append(dialog);
  dialog.showModal();
  variant.focus();
  return dialog;
}

/** A refused challenge in words. */
function challengeRefusal(err, name) {
  return (
    {
      not_found: `${name} cannot be challenged: there is no such player.`,
      rated_needs_account:
        "Rated games are for registered accounts on both sides: send a casual challenge.",
      rate_limited: "You have 10 challenges waiting already: wait for an answer or cancel one.",
    }[err.code] || err.message
  );
}

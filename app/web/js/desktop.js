// Browser notifications (the Notification API) while the tab is hidden: it is your move, a game
// of yours started, a challenge came. Permission is asked once (at the first click of a
// signed-in user, as browsers only allow from a gesture); the header's bell switch turns them
// off and on (prefs.notify); the browser's own "blocked" is respected.

import { h } from "./dom.js";
import { prefs } from "./prefs.js";

const supported = () => typeof window.Notification === "function";

/** Ask for the permission once, ever, from a user's gesture. */
export function askOnce() {
  if (!supported() || prefs.notifyAsked || Notification.permission !== "default") return;
  prefs.notifyAsked = true;
  try {
    Notification.requestPermission();
  } catch {
    // An old browser without the promise form: nothing more to do.
  }
}

/**
 * Tell `title` (`body`, a click opens `href`) if the tab is hidden, the switch is on and the
 * browser allows it. `tag` replaces an earlier notification of the same thing.
 */
export function notify(title, body, { href = null, tag = undefined } = {}) {
  if (!document.hidden || !prefs.notify || !supported()) return;
  if (Notification.permission !== "granted") return;
  let note;
  try {
    note = new Notification(title, { body, tag });
  } catch {
    return; // a browser that only notifies from a service worker
  }
  note.onclick = () => {
    window.focus();
    if (href) location.hash = href;
    note.close();
  };
}

/** A bell, struck through when notifications are off. */
function bell(off) {
  const SVG = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "20");
  svg.setAttribute("height", "20");
  svg.setAttribute("aria-hidden", "true");
  const path = (d) => {
    const p = document.createElementNS(SVG, "path");
    p.setAttribute("d", d);
    p.setAttribute("fill", "none");
    p.setAttribute("stroke", "currentColor");
    p.setAttribute("stroke-width", "2");
    p.setAttribute("stroke-linecap", "round");
    svg.append(p);
  };
  path("M6 16V11a6 6 0 0 1 12 0v5l2 2H4z");
  path("M10 20a2 2 0 0 0 4 0");
  if (off) path("M3 3l18 18");
  return svg;
}

/** The header's switch for browser notifications (pressed: they are on). */
export function notifySwitch() {
  const button = h("button", {
    type: "button",
    class: "mute notify-switch",
    "aria-label": "Browser notifications",
    onClick: () => {
      prefs.notify = !prefs.notify;
      if (prefs.notify) askOnce();
    },
  });
  const draw = () => {
    button.setAttribute("aria-pressed", String(prefs.notify));
    button.replaceChildren(bell(!prefs.notify));
    button.title = prefs.notify
      ? "Notifications while the tab is hidden: on"
      : "Notifications while the tab is hidden: off";
  };
  draw();
  prefs.subscribe(draw);
  return button;
}

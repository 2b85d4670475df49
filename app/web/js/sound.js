// Short synthesized sounds (Web Audio, no files): a move, a capture, a game's start and end, low
// time, "your game / your move" notices and a challenge. Muted by the switch in the header
// (prefs.muted).
// Each sound played is also announced as a `checkers:sound` event on window (detail: its kind).

import { h } from "./dom.js";
import { prefs } from "./prefs.js";

/** Each sound: notes as [frequency Hz, start s, length s], a waveform and a peak volume. */
const SOUNDS = {
  move: { notes: [[520, 0, 0.06]], wave: "triangle", volume: 0.25 },
  capture: {
    notes: [
      [420, 0, 0.05],
      [300, 0.06, 0.08],
    ],
    wave: "square",
    volume: 0.12,
  },
  start: {
    notes: [
      [523, 0, 0.1],
      [659, 0.1, 0.1],
      [784, 0.2, 0.16],
    ],
    wave: "sine",
    volume: 0.25,
  },
  end: {
    notes: [
      [784, 0, 0.12],
      [659, 0.12, 0.12],
      [523, 0.24, 0.22],
    ],
    wave: "sine",
    volume: 0.25,
  },
  low: {
    notes: [
      [880, 0, 0.07],
      [880, 0.14, 0.07],
    ],
    wave: "square",
    volume: 0.1,
  },
  challenge: {
    notes: [
      [587, 0, 0.08],
      [784, 0.1, 0.08],
      [587, 0.2, 0.08],
      [784, 0.3, 0.14],
    ],
    wave: "triangle",
    volume: 0.3,
  },
  notice: {
    notes: [
      [660, 0, 0.09],
      [990, 0.1, 0.14],
    ],
    wave: "sine",
    volume: 0.3,
  },
};

let context = null;

function audio() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return null;
  if (!context) context = new Context();
  // Browsers start a context suspended until the page has had a click or a key press.
  if (context.state === "suspended") context.resume().catch(() => {});
  return context;
}

/** Play sound `kind` unless muted. */
export function play(kind) {
  const sound = SOUNDS[kind];
  if (!sound || prefs.muted) return;
  window.dispatchEvent(new CustomEvent("checkers:sound", { detail: kind }));
  const ctx = audio();
  if (!ctx) return;
  const now = ctx.currentTime;
  for (const [frequency, start, length] of sound.notes) {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = sound.wave;
    osc.frequency.value = frequency;
    gain.gain.setValueAtTime(0.0001, now + start);
    gain.gain.exponentialRampToValueAtTime(sound.volume, now + start + 0.01);
    gain.gain.exponentialRampToValueAtTime(0.0001, now + start + length);
    osc.connect(gain).connect(ctx.destination);
    osc.start(now + start);
    osc.stop(now + start + length + 0.02);
  }
}

// The first click or key press unlocks audio for the sounds that come later without one.
for (const type of ["pointerdown", "keydown"]) {
  window.addEventListener(type, () => !prefs.muted && audio(), { once: true, capture: true });
}

const SVG = "http://www.w3.org/2000/svg";

/** A speaker icon, struck through when muted (drawn, so no font needs the glyph). */
function speaker(muted) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "20");
  svg.setAttribute("height", "20");
  svg.setAttribute("aria-hidden", "true");
  const path = (d, fill) => {
    const p = document.createElementNS(SVG, "path");
    p.setAttribute("d", d);
    p.setAttribute("fill", fill ? "currentColor" : "none");
    p.setAttribute("stroke", "currentColor");
    p.setAttribute("stroke-width", "2");
    p.setAttribute("stroke-linecap", "round");
    svg.append(p);
  };
  path("M3 9h4l5-4v14l-5-4H3z", true);
  if (muted) path("M16 9l6 6M22 9l-6 6", false);
  else path("M16 8.5a5 5 0 0 1 0 7M18.5 6a8.5 8.5 0 0 1 0 12", false);
  return svg;
}

/** The header's mute switch: a toggle button whose pressed state is remembered. */
export function muteSwitch() {
  const button = h("button", {
    type: "button",
    class: "mute",
    "aria-label": "Mute sounds",
    onClick: () => {
      prefs.muted = !prefs.muted;
      if (!prefs.muted) play("move");
    },
  });
  const draw = () => {
    button.setAttribute("aria-pressed", String(prefs.muted));
    button.replaceChildren(speaker(prefs.muted));
    button.title = prefs.muted ? "Sounds are off" : "Sounds are on";
  };
  draw();
  prefs.subscribe(draw);
  return button;
}

// The move list in PDN notation, shared by the live game and the replay viewer.

import { formatClock, h, mount } from "./dom.js";
import { moveRows } from "./notation.js";

export const MARK_SYMBOLS = { inaccuracy: "?!", mistake: "?", blunder: "??" };

/**
 * A numbered move list. With `onPick(ply)` each move is a button that jumps to that ply;
 * `current` marks the ply on the board; `clocks[i]` (ms, or null) is the mover's time left after
 * ply i + 1; `marks[i]` (or null) the analysis's label of ply i + 1 ("inaccuracy", "mistake",
 * "blunder"), shown as ?!, ? or ?? after the move. The list scrolls inside its own box, never
 * the page.
 */
export function renderMoveList(
  list,
  { moves, startTurn = "black", current = null, onPick = null, clocks = null, marks = null },
) {
  const markOf = (entry) => {
    const label = marks && marks[entry.ply - 1];
    return label
      ? h("span", { class: `move-mark ${label}`, title: label, text: MARK_SYMBOLS[label] })
      : null;
  };
  const clockOf = (entry) => {
    const ms = clocks && clocks[entry.ply - 1];
    return typeof ms === "number"
      ? h("span", { class: "move-clock", text: formatClock(ms).replace(/\.\d$/, "") })
      : null;
  };
  const cell = (entry) => {
    if (!entry) return h("span", { class: "move", text: "…" });
    const attrs = { class: "move", "data-ply": String(entry.ply) };
    if (!onPick) {
      return h("span", {
        ...attrs,
        class: entry.ply === current ? "move current" : "move",
        text: entry.text,
      });
    }
    const clock = clockOf(entry);
    const mark = markOf(entry);
    return h(
      "button",
      {
        ...attrs,
        type: "button",
        // One move is reached by Tab (the current one, or the first at the start position).
        tabindex: entry.ply === (current || 1) ? "0" : "-1",
        "aria-current": entry.ply === current ? "step" : false,
        "aria-label": `move ${entry.ply}: ${entry.text}${mark ? `, ${mark.title}` : ""}${clock ? `, ${clock.textContent} left` : ""}`,
        onClick: () => onPick(entry.ply),
      },
      h("span", { class: "move-text", text: entry.text }),
      mark,
      clock,
    );
  };
  mount(
    list,
    moveRows(moves, startTurn).map((row) =>
      h(
        "li",
        {},
        h("span", { class: "num", text: `${row.number}.` }),
        cell(row.black),
        row.white ? cell(row.white) : h("span"),
      ),
    ),
  );
  const active = list.querySelector(".current, [aria-current='step']");
  if (!active) {
    list.scrollTop = list.scrollHeight;
    return;
  }
  // Bring the current move into the list's own view (scrollIntoView would scroll the page too).
  const box = list.getBoundingClientRect();
  const item = active.getBoundingClientRect();
  if (item.top < box.top) list.scrollTop -= box.top - item.top;
  else if (item.bottom > box.bottom) list.scrollTop += item.bottom - box.bottom;
}

// The move list in PDN notation, shared by the live game and the replay viewer.

import { h, mount } from "./dom.js";
import { moveRows } from "./notation.js";

/**
 * A numbered move list. With `onPick(ply)` each move is a button that jumps to that ply;
 * `current` marks the ply on the board.
 */
export function renderMoveList(
  list,
  { moves, startTurn = "black", current = null, onPick = null },
) {
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
    return h("button", {
      ...attrs,
      type: "button",
      "aria-current": entry.ply === current ? "step" : false,
      "aria-label": `move ${entry.ply}: ${entry.text}`,
      onClick: () => onPick(entry.ply),
      text: entry.text,
    });
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
  if (active) active.scrollIntoView({ block: "nearest" });
  else list.scrollTop = list.scrollHeight;
}

// A refusal to open a table, in words a player can act on: `too_many_tables` names the tables
// that count (docs/protocol.md), each a link, and one waiting for an opponent can be closed here.

import { h, mount } from "./dom.js";
import { live } from "./live.js";

/** Show `err` (an `error` message) in `box`; `again`: what to do once a table is closed. */
export function showRefusal(box, err, again = null) {
  if (err.code !== "too_many_tables" || !Array.isArray(err.tables)) {
    box.textContent = err.message;
    return;
  }
  const items = err.tables.map((t) => {
    const link = h("a", { href: `#/table/${t.id}`, text: `Table ${t.id}` });
    const what = h("span", {
      class: "muted",
      text: t.status === "playing" ? " (your game in progress)" : " (waiting for an opponent)",
    });
    const item = h("li", {}, link, what);
    if (t.status === "open") {
      item.append(
        " ",
        h("button", {
          type: "button",
          text: `Close table ${t.id}`,
          onClick: () => {
            live.send({ type: "leave", table: t.id }, (e) => mount(item, e.message));
            mount(item, `Table ${t.id} closed.`);
            if (again) again();
          },
        }),
      );
    }
    return item;
  });
  mount(
    box,
    h("span", {
      text: `You already have ${err.tables.length} open tables; close one to open another:`,
    }),
    h("ul", { class: "refused-tables" }, items),
  );
}

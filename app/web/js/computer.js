// "Play the computer": a lobby panel that starts a game against the AI (levels 1-8) with
// `play_ai` and opens its table.

import { h } from "./dom.js";
import { VARIANTS } from "./notation.js";
import { live } from "./live.js";
import { showRefusal } from "./refusals.js";
import { requireUser } from "./session.js";

export const LEVELS = [1, 2, 3, 4, 5, 6, 7, 8];

/** The panel: variant, level, colour (or by lot) and clock; submitting opens the table. */
export function computerPanel() {
  const error = h("p", { class: "error-text", role: "alert" });
  const variant = h(
    "select",
    { name: "variant" },
    VARIANTS.map(([value, text]) => h("option", { value, text })),
  );
  const level = h(
    "select",
    { name: "level" },
    LEVELS.map((n) => h("option", { value: String(n), text: `Level ${n}`, selected: n === 3 })),
  );
  const colour = h(
    "select",
    { name: "colour" },
    h("option", { value: "black", text: "Black (moves first)" }),
    h("option", { value: "white", text: "White" }),
    h("option", { value: "random", text: "By lot" }),
  );
  const timed = h("input", { type: "checkbox", name: "timed" });
  const base = h("input", {
    type: "number",
    name: "base",
    min: "0.5",
    max: "180",
    step: "0.5",
    value: "5",
    disabled: true,
  });
  const increment = h("input", {
    type: "number",
    name: "increment",
    min: "0",
    max: "180",
    value: "3",
    disabled: true,
  });
  timed.addEventListener("change", () => {
    base.disabled = !timed.checked;
    increment.disabled = !timed.checked;
  });
  const submit = h("button", { type: "submit", class: "primary", text: "Play the computer" });

  async function start(event) {
    event.preventDefault();
    error.textContent = "";
    const user = await requireUser("Sign in, register or play as a guest to play the computer.");
    if (!user) return;
    const message = {
      type: "play_ai",
      variant: variant.value,
      level: Number(level.value),
      colour: colour.value,
      clock: timed.checked
        ? { base: Math.round(Number(base.value) * 60), increment: Number(increment.value) || 0 }
        : null,
    };
    submit.disabled = true;
    const stop = live.on("table", (snapshot) => {
      stop();
      submit.disabled = false;
      live.adopt(snapshot.table.id);
      location.hash = `#/table/${snapshot.table.id}`;
    });
    const sent = live.send(message, (err) => {
      stop();
      submit.disabled = false;
      showRefusal(error, err);
    });
    if (!sent) {
      stop();
      submit.disabled = false;
      error.textContent = "Not connected to the server; try again in a moment.";
    }
  }

  return h(
    "section",
    { class: "panel computer-panel", "aria-labelledby": "computer-title" },
    h("h2", { id: "computer-title", text: "Play the computer" }),
    h(
      "form",
      { onSubmit: start, "aria-labelledby": "computer-title" },
      h(
        "div",
        { class: "form-row" },
        h("label", {}, "Variant", variant),
        h("label", {}, "Level", level),
        h("label", {}, "Your colour", colour),
      ),
      h(
        "div",
        { class: "form-row" },
        h("label", { class: "inline" }, timed, "Timed game"),
        h("label", {}, "Minutes", base),
        h("label", {}, "Increment (s)", increment),
      ),
      error,
      h("div", { class: "toolbar" }, submit),
    ),
  );
}

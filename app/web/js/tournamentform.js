// The form that creates a tournament (`POST /api/tournaments`) or changes one before its start
// (`PUT /api/tournaments/{id}`): kind, name, variant, clock, rated, when it starts, how long it
// lasts (an arena's minutes, a Swiss's rounds, a round robin once or twice), the opening ballot
// (English Swiss and round robins), a player limit, and for administrators a repeat. The fields
// a kind does not use are hidden; the server checks everything, and its refusal shows in the
// form in its own words.

import { api } from "./api.js";
import { h } from "./dom.js";
import { VARIANTS } from "./notation.js";
import { KINDS } from "./tournamentwords.js";

/** A number field's value: null when empty, else the number (the server checks its range). */
function numberOrNull(input) {
  return input.value.trim() === "" ? null : Number(input.value);
}

/**
 * The form. `tournament`: the one to change (its fields filled in), else a new one is created;
 * `admin`: offer the repeat; `onDone(tournament)`: what the server answered; `onClose`: a button
 * to give up (editing). `startsIn()`: the seconds left before an edited tournament's start, sent
 * as they are unless the user changed the field.
 */
export function tournamentForm({
  tournament = null,
  admin = false,
  label = "Create a tournament",
  submitText = "Create tournament",
  onDone,
  onClose = null,
  startsIn = null,
}) {
  const t = tournament;
  const kind = h(
    "select",
    { name: "kind" },
    KINDS.map(([value, text]) => h("option", { value, text, selected: t && t.kind === value })),
  );
  const name = h("input", {
    name: "name",
    required: true,
    maxlength: "80",
    autocomplete: "off",
    value: t ? t.name : "",
  });
  const variant = h(
    "select",
    { name: "variant" },
    VARIANTS.map(([value, text]) =>
      h("option", { value, text, selected: t && t.variant === value }),
    ),
  );
  const base = h("input", {
    name: "base",
    type: "number",
    min: "0.25",
    step: "0.25",
    required: true,
    value: t ? String(t.clock.base / 60) : "3",
  });
  const increment = h("input", {
    name: "increment",
    type: "number",
    min: "0",
    step: "1",
    value: t ? String(t.clock.increment) : "2",
  });
  const rated = h("input", { name: "rated", type: "checkbox", checked: Boolean(t && t.rated) });
  const starts = h("input", {
    name: "starts_in",
    type: "number",
    min: "0",
    step: "1",
    value: t ? String(Math.round((t.starts_in || 0) / 60)) : "5",
  });
  let startsTouched = false;
  starts.addEventListener("input", () => (startsTouched = true));
  const minutes = h("input", {
    name: "minutes",
    type: "number",
    min: "1",
    step: "1",
    value: t ? (t.minutes ?? "") : "30",
  });
  const rounds = h("input", {
    name: "rounds",
    type: "number",
    min: "1",
    step: "1",
    value: t ? (t.rounds ?? "") : "5",
  });
  const double = h("input", { name: "double", type: "checkbox", checked: Boolean(t && t.double) });
  const ballot = h(
    "select",
    { name: "ballot" },
    h("option", { value: "gayp", text: "Go as you please" }),
    h("option", {
      value: "3-move",
      text: "3-move ballot (two games, colours reversed)",
      selected: Boolean(t && t.ballot === "3-move"),
    }),
  );
  const most = h("input", {
    name: "max_players",
    type: "number",
    min: "2",
    step: "1",
    value: t && t.max_players ? String(t.max_players) : "",
  });
  // Draw offers are refused before this move: 30 in a Swiss unless changed, else any time.
  const drawDefault = () => (kind.value === "swiss" ? "30" : "0");
  let drawTouched = Boolean(t);
  const drawAfter = h("input", {
    name: "draw_after_move",
    type: "number",
    min: "0",
    max: "200",
    step: "1",
    value: t ? String(t.draw_after_move ?? 0) : drawDefault(),
    onInput: () => {
      drawTouched = true;
    },
  });
  const every = h("input", {
    name: "every_minutes",
    type: "number",
    min: "10",
    step: "1",
    value: t && t.every_minutes ? String(t.every_minutes) : "",
  });

  const fields = {
    minutes: h("label", {}, "Length (minutes)", minutes),
    rounds: h("label", {}, "Rounds", rounds),
    double: h("label", { class: "inline" }, double, "Double round robin (each pair meets twice)"),
    ballot: h("label", {}, "Openings", ballot),
  };
  const showFields = () => {
    fields.minutes.hidden = kind.value !== "arena";
    fields.rounds.hidden = kind.value !== "swiss";
    fields.double.hidden = kind.value !== "round_robin";
    fields.ballot.hidden = kind.value === "arena" || variant.value !== "english";
  };
  kind.addEventListener("change", showFields);
  kind.addEventListener("change", () => {
    if (!drawTouched) drawAfter.value = drawDefault();
  });
  variant.addEventListener("change", showFields);
  showFields();

  const error = h("p", { class: "error-text", role: "alert" });
  const submit = h("button", { type: "submit", class: "primary", text: submitText });

  function body() {
    const seconds =
      t && !startsTouched && startsIn ? startsIn() : Math.round(Number(starts.value || 0) * 60);
    const payload = {
      kind: kind.value,
      name: name.value.trim(),
      variant: variant.value,
      clock: {
        base: Math.round(Number(base.value) * 60),
        increment: Number(increment.value || 0),
      },
      rated: rated.checked,
      starts_in: Math.max(0, Math.round(seconds)),
      minutes: kind.value === "arena" ? numberOrNull(minutes) : null,
      rounds: kind.value === "swiss" ? numberOrNull(rounds) : null,
      double: kind.value === "round_robin" && double.checked,
      ballot: fields.ballot.hidden ? "gayp" : ballot.value,
      max_players: numberOrNull(most),
    };
    if (admin) payload.every_minutes = numberOrNull(every);
    payload.draw_after_move = Number(drawAfter.value || 0);
    return payload;
  }

  const form = h(
    "form",
    {
      class: "tournament-form",
      "aria-label": label,
      onSubmit: async (event) => {
        event.preventDefault();
        error.textContent = "";
        submit.disabled = true;
        try {
          const answer = t
            ? await api.put(`/api/tournaments/${t.id}`, body())
            : await api.post("/api/tournaments", body());
          onDone(answer);
        } catch (err) {
          error.textContent = refusal(err);
        } finally {
          submit.disabled = false;
        }
      },
    },
    h(
      "div",
      { class: "form-row" },
      h("label", {}, "Kind", kind),
      h("label", { class: "wide" }, "Name", name),
      h("label", {}, "Variant", variant),
    ),
    h(
      "div",
      { class: "form-row" },
      h("label", {}, "Clock: minutes each", base),
      h("label", {}, "Increment (seconds)", increment),
      h("label", {}, "Starts in (minutes)", starts),
      fields.minutes,
      fields.rounds,
      fields.ballot,
      h("label", {}, "Most players (empty: no limit)", most),
      h("label", {}, "No draw offers before move (0: any time)", drawAfter),
      admin ? h("label", {}, "Repeat every (minutes; empty: once)", every) : null,
    ),
    h(
      "div",
      { class: "form-row" },
      h("label", { class: "inline" }, rated, "Rated"),
      fields.double,
    ),
    error,
    h(
      "div",
      { class: "toolbar" },
      submit,
      onClose ? h("button", { type: "button", onClick: onClose, text: "Discard changes" }) : null,
    ),
  );
  return form;
}

/** A refusal in words a player can act on. */
function refusal(err) {
  const words = {
    rate_limited: `You have created as many tournaments as you may for now: ${err.message}.`,
    forbidden: `Not allowed: ${err.message}.`,
    conflict: `Not possible now: ${err.message}.`,
  }[err.code];
  if (words) return words;
  // A request the server could not read names the field ("body.minutes: …").
  const message = (err.message || "The server refused the tournament").replace(/^body\./, "");
  return message.charAt(0).toUpperCase() + message.slice(1) + (/[.!?]$/.test(message) ? "" : ".");
}

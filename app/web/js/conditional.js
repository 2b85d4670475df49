// Conditional moves in a correspondence game (docs/notifications.md): while the opponent is to
// move, a player writes lines of "their move, my reply", one line per row ("22-18 15x22
// 25x18 …"); the server checks them against the rules, keeps them from the opponent's eyes and
// plays the first reply that fits when their move comes.

import { api } from "./api.js";
import { h, mount } from "./dom.js";

/** The panel; `update({game, mine, myTurn, days})` shows it for the player of a
 * correspondence game (`days` per move) in progress, its lines editable while the opponent is
 * to move. */
export function conditionalPanel() {
  const lines = h("textarea", {
    name: "lines",
    rows: "4",
    spellcheck: false,
    "aria-describedby": "conditional-help",
  });
  const status = h("p", { class: "muted", role: "status" });
  const error = h("p", { class: "error-text", role: "alert" });
  const save = h("button", { type: "submit", text: "Save conditional moves" });
  let gameId = null;
  let ply = null;
  let edited = false; // typed in since the lines were last shown: a late load keeps the typing
  lines.addEventListener("input", () => {
    edited = true;
  });
  const form = h(
    "form",
    {
      onSubmit: async (event) => {
        event.preventDefault();
        error.textContent = "";
        const parsed = lines.value
          .split("\n")
          .map((row) => row.trim().split(/[\s,]+/).filter(Boolean))
          .filter((row) => row.length);
        try {
          show(await api.put(`/api/games/${gameId}/conditional`, { lines: parsed }), true);
        } catch (err) {
          error.textContent = err.message;
        }
      },
    },
    h("label", {}, "Lines: their move, your reply…", lines),
    h("p", {
      id: "conditional-help",
      class: "muted",
      text:
        "One line per row, such as 22-18 15x22. When your opponent's move begins a line, " +
        "its reply is played for you at once. Only you see them.",
    }),
    save,
  );
  const element = h(
    "section",
    { class: "panel conditional-panel", "aria-labelledby": "conditional-title", hidden: true },
    h("h2", { id: "conditional-title", text: "Conditional moves" }),
    status,
    form,
    error,
  );

  /** The lines stored; `saved`: just saved from what was typed (else they were read). */
  function show(found, saved = false) {
    if (found.ply !== ply) return; // an answer about a position the game has left
    if (saved || !edited) {
      lines.value = found.lines.map((line) => line.join(" ")).join("\n");
      edited = false;
    }
    status.textContent = found.lines.length
      ? `${found.lines.length} line${found.lines.length > 1 ? "s" : ""} waiting for your opponent's move.`
      : "None stored.";
  }

  return {
    element,
    update({ game, mine, myTurn, days }) {
      const shown = Boolean(game && mine && game.status === "playing" && days);
      element.hidden = !shown;
      if (!shown) return;
      form.hidden = myTurn;
      if (myTurn) {
        mount(status, "Your move: conditional moves wait for your opponent's.");
        ply = null;
        return;
      }
      if (gameId === game.id && ply === game.ply) return;
      gameId = game.id;
      ply = game.ply;
      edited = false;
      api.get(`/api/games/${game.id}/conditional`).then(show, (err) => {
        error.textContent = err.message;
      });
    },
  };
}

// "Play now": the lobby's quick-pairing panel. The pools (`GET /api/pools`, with how many wait in
// each, refreshed) are buttons; a click seeks a game in that pool, rated or casual; while the
// server looks for an opponent the panel shows the pool, the time waited and Cancel, and the game
// it finds opens at once (`expectGame`). A live pool's seek belongs to the lobby page: leaving
// it, or closing the tab, cancels it; a reconnect while waiting seeks again (the server drops a
// seek whose connection closed). A correspondence pool's seek stays while you are away: the
// game found is announced wherever you are, and waits a day for your first move.

import { api } from "./api.js";
import { h, mount } from "./dom.js";
import { live } from "./live.js";
import { expectGame } from "./mygames.js";
import { requireUser, session } from "./session.js";

const REFRESH_MS = 5000;

/** A seek refused, in words. */
function refusal(err) {
  return (
    {
      game_in_progress: "You are playing a game already: finish it before looking for another.",
      rated_needs_account:
        "Rated games are for registered accounts: sign up to play one, or play casual.",
    }[err.code] || err.message
  );
}

function waited(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

/** The panel; `stop()` cancels a seek in progress and stops refreshing. */
export function quickPairingPanel() {
  let pools = [];
  let seeking = null; // {pool, rated, since}: the server has the seek
  let asked = null; // {pool, rated}: sent, not answered yet
  const error = h("p", { class: "error-text", role: "alert" });
  const buttons = h("div", { class: "pool-buttons" }, h("p", { class: "muted", text: "Loading…" }));
  const casual = h("input", {
    type: "radio",
    name: "pairing-mode",
    value: "casual",
    checked: true,
  });
  const rated = h("input", {
    type: "radio",
    name: "pairing-mode",
    value: "rated",
    "aria-describedby": "pairing-rated-help",
  });
  const ratedHelp = h("p", { id: "pairing-rated-help", class: "muted" });
  const status = h("div", { class: "seek-status", role: "status", "aria-live": "polite" });

  function poolName(id) {
    const pool = pools.find((p) => p.id === id);
    return pool ? pool.name : id;
  }

  function drawButtons() {
    if (!pools.length) {
      mount(buttons, h("p", { class: "muted", text: "No pool is open right now." }));
      return;
    }
    mount(
      buttons,
      pools.map((pool) =>
        h(
          "button",
          {
            type: "button",
            class: "pool",
            dataset: { pool: pool.id },
            "aria-pressed": String(Boolean(seeking && seeking.pool === pool.id)),
            onClick: () => seek(pool.id),
          },
          h("span", { class: "pool-name", text: pool.name }),
          h("span", {
            class: "pool-waiting muted",
            text: pool.waiting === 1 ? "1 waiting" : `${pool.waiting} waiting`,
          }),
        ),
      ),
    );
  }

  function drawStatus() {
    if (!seeking) {
      status.hidden = true;
      mount(status);
      return;
    }
    status.hidden = false;
    const mode = seeking.rated ? "rated" : "casual";
    mount(
      status,
      h("span", { text: `Looking for an opponent: ${poolName(seeking.pool)}, ${mode} · ` }),
      h("span", { class: "seek-elapsed", text: waited(Date.now() - seeking.since) }),
      " ",
      h("button", { type: "button", onClick: cancel, text: "Cancel" }),
    );
  }

  function drawRated(user) {
    const guest = Boolean(user && user.kind === "guest");
    rated.disabled = guest;
    if (guest) {
      rated.checked = false;
      casual.checked = true;
    }
    ratedHelp.textContent = guest
      ? "Rated games are for registered accounts: sign up to play one."
      : "Rated pairs you with rated seekers only and moves both ratings.";
  }

  async function load() {
    try {
      pools = await api.get("/api/pools");
    } catch {
      return; // the buttons stay as they were; the next refresh tries again
    }
    drawButtons();
  }

  function sendSeek(pool, wanted) {
    asked = { pool, rated: wanted };
    return live.send({ type: "seek", pool, rated: wanted }, (err) => {
      asked = null;
      seeking = null;
      error.textContent = refusal(err);
      drawStatus();
      drawButtons();
    });
  }

  async function seek(pool) {
    error.textContent = "";
    const user = await requireUser("Sign in, register or play as a guest to play now.");
    if (!user) return;
    if (!sendSeek(pool, rated.checked)) {
      error.textContent = "Not connected to the server; try again in a moment.";
    }
  }

  /** Leaving the page: a live seek ends, a correspondence one stays. */
  function leave() {
    const pool = pools.find((p) => p.id === (seeking || asked || {}).pool);
    if (pool && pool.clock && pool.clock.days) return;
    cancel();
  }

  function cancel() {
    if (!seeking && !asked) return;
    seeking = null;
    asked = null;
    live.send({ type: "cancel_seek" }, () => {}); // paired meanwhile: the game opens anyway
    drawStatus();
    drawButtons();
    load();
  }

  const stops = [
    live.on("seeking", (message) => {
      const since = seeking && seeking.pool === message.pool ? seeking.since : Date.now();
      seeking = { pool: message.pool, rated: message.rated, since };
      asked = null;
      drawStatus();
      drawButtons();
      load();
    }),
    live.on("welcome", () => {
      // The seek ended with the old connection: ask again (signed out: it is over).
      if (!seeking) return;
      if (live.user) {
        sendSeek(seeking.pool, seeking.rated);
      } else {
        seeking = null;
        asked = null;
        drawStatus();
        drawButtons();
      }
    }),
    live.on("your_game", () => {
      // After `expectGame` has taken the user to the table: the seek is over (a game from
      // elsewhere ends it too).
      queueMicrotask(() => {
        if (seeking || asked) cancel();
      });
    }),
    expectGame(() => Boolean(seeking || asked)),
    session.subscribe(drawRated),
  ];
  const ticker = setInterval(() => {
    const elapsed = status.querySelector(".seek-elapsed");
    if (seeking && elapsed) elapsed.textContent = waited(Date.now() - seeking.since);
  }, 1000);
  const refresher = setInterval(load, REFRESH_MS);
  const onHide = () => leave();
  window.addEventListener("pagehide", onHide);
  load();
  drawStatus();

  const element = h(
    "section",
    { class: "panel quick-pairing", "aria-labelledby": "pairing-title" },
    h("h2", { id: "pairing-title", text: "Play now" }),
    h("p", {
      class: "muted",
      text: "Pick a game: you are paired with someone of a similar rating.",
    }),
    h(
      "fieldset",
      { class: "pairing-mode" },
      h("legend", { class: "visually-hidden", text: "Rated or casual" }),
      h("label", { class: "inline" }, casual, "Casual"),
      h("label", { class: "inline" }, rated, "Rated"),
    ),
    ratedHelp,
    buttons,
    status,
    error,
  );
  return {
    element,
    stop() {
      leave();
      for (const stop of stops) stop();
      clearInterval(ticker);
      clearInterval(refresher);
      window.removeEventListener("pagehide", onHide);
    },
  };
}

// The lobby: quick pairing ("Play now"), the computer, who is online, rooms and their tables,
// live; open a table, sit, watch.

import { computerPanel } from "./computer.js";
import { formatTimeControl, h, mount, setTitle } from "./dom.js";
import { connectionBadge, live } from "./live.js";
import { myGames as gamesInProgress, onMyGames } from "./mygames.js";
import { variantName } from "./notation.js";
import { onlinePanel } from "./online.js";
import { quickPairingPanel } from "./quickpair.js";
import { ratingBadge } from "./ratings.js";
import { showRefusal } from "./refusals.js";
import { requireUser, session } from "./session.js";

export function render(main, params) {
  setTitle("Lobby");
  let rooms = [];
  const roomsBox = h(
    "div",
    { class: "rooms-area" },
    h("p", { class: "muted", text: "Loading the rooms…" }),
  );
  const [conn, stopConn] = connectionBadge();
  const selectedSlug = params.room || null;
  const myGames = h("div", { class: "my-games", "aria-live": "polite" });
  const pairing = quickPairingPanel();
  const online = onlinePanel(selectedSlug);

  // Kept live: the background watch of the user's games says when one starts or ends.
  function drawMyGames() {
    const playing = gamesInProgress();
    mount(
      myGames,
      playing.length ? h("strong", { text: "Your games in progress:" }) : null,
      playing.map((p) =>
        h("a", {
          class: "button primary",
          href: `#/table/${p.table}`,
          text: `Back to table ${p.table}${againstText(p)}${turnText(p)}`,
        }),
      ),
    );
  }

  const onLobby = (message) => {
    if (message.type === "lobby") rooms = message.rooms || [];
    else if (message.type === "lobby_table") {
      const room = rooms.find((r) => r.id === message.room);
      if (room) {
        room.tables = (room.tables || []).filter((t) => t.id !== message.table.id);
        room.tables.push(message.table);
        room.tables.sort((a, b) => a.id - b.id);
      }
    } else if (message.type === "lobby_table_removed") {
      const room = rooms.find((r) => r.id === message.room);
      if (room) room.tables = (room.tables || []).filter((t) => t.id !== message.table);
    } else if (message.type === "room_closed") {
      rooms = rooms.filter((r) => r.id !== message.room);
    }
    if (message.type === "lobby" || message.type === "room_closed") online.setRooms(rooms);
    online.changed();
    draw();
  };

  function draw() {
    if (!rooms.length) {
      mount(roomsBox, h("p", { class: "muted", text: "No room is open right now." }));
      return;
    }
    const shown = selectedSlug ? rooms.filter((r) => r.slug === selectedSlug) : rooms;
    mount(
      roomsBox,
      selectedSlug ? h("p", {}, h("a", { href: "#/", text: "← All rooms" })) : null,
      h("div", { class: "rooms" }, shown.map(roomCard)),
    );
  }

  function roomCard(room) {
    const tables = room.tables || [];
    const headingId = `room-${room.id}`;
    return h(
      "section",
      { class: "panel room-card", "aria-labelledby": headingId, dataset: { room: room.slug } },
      h(
        "h2",
        { id: headingId },
        h("a", { href: `#/room/${encodeURIComponent(room.slug)}`, text: room.name }),
      ),
      h("p", { class: "muted", text: `${variantName(room.variant)} · ${clockText(room.clock)}` }),
      h("button", {
        type: "button",
        class: "primary",
        disabled: room.open === false,
        onClick: () => openTableDialog(room),
        text: "Open a table",
      }),
      tables.length
        ? h(
            "ul",
            { class: "tables", "aria-label": `Tables in ${room.name}` },
            tables.map(tableCard),
          )
        : h("p", { class: "muted", text: "No tables yet." }),
    );
  }

  function tableCard(table) {
    const players = table.players || [];
    const me = session.user;
    const seated = me && players.some((p) => p.id === me.id);
    const canSit = table.status === "open" && players.length < 2 && !seated;
    const names = players.flatMap((p, i) => [
      i ? " vs " : null,
      h("span", { class: "player" }, p.name, ratingBadge(p)),
    ]);
    return h(
      "li",
      { class: "panel table-card", dataset: { table: String(table.id) } },
      h(
        "div",
        {},
        h("strong", { text: `Table ${table.id}` }),
        " ",
        h("span", { class: "muted", text: statusText(table) }),
        h("div", { class: "seats" }, players.length ? names : "Waiting for players"),
        h(
          "div",
          { class: "muted" },
          `${variantName(table.variant)} · ${clockText(table.clock)} · ${colourText(table.colour)}`,
          table.rated ? " · rated" : " · casual",
          table.start_fen ? " · custom start" : "",
        ),
        spectatorsBadge(table),
      ),
      h(
        "div",
        { class: "toolbar" },
        canSit
          ? h("button", {
              type: "button",
              class: "primary",
              "aria-label": `Sit at table ${table.id}`,
              onClick: () => sit(table.id),
              text: "Sit",
            })
          : null,
        h("a", {
          class: "button",
          href: `#/table/${table.id}`,
          "aria-label": `${seated ? "Go to" : "Watch"} table ${table.id}`,
          text: seated ? "Go to table" : "Watch",
        }),
      ),
    );
  }

  async function sit(tableId) {
    const user = await requireUser("Sign in, register or play as a guest to take a seat.");
    if (!user) return;
    location.hash = `#/table/${tableId}?sit=1`;
  }

  async function openTableDialog(room) {
    const user = await requireUser("Sign in, register or play as a guest to open a table.");
    if (!user) return;
    const error = h("p", { class: "error-text", role: "alert" });
    const variant = h(
      "select",
      { name: "variant" },
      h("option", {
        value: "english",
        text: "English draughts",
        selected: room.variant === "english",
      }),
      h("option", {
        value: "pool",
        text: "American pool checkers",
        selected: room.variant === "pool",
      }),
    );
    const timed = h("input", { type: "checkbox", name: "timed", checked: Boolean(room.clock) });
    const base = h("input", {
      type: "number",
      name: "base",
      min: "0.5",
      max: "180",
      step: "0.5",
      value: String(room.clock ? room.clock.base / 60 : 5),
      "aria-describedby": "clock-help",
    });
    const increment = h("input", {
      type: "number",
      name: "increment",
      min: "0",
      max: "180",
      value: String(room.clock ? room.clock.increment : 3),
    });
    // Correspondence: days per move instead of a clock (the choices the server takes).
    const days = h(
      "select",
      { name: "days", "aria-describedby": "days-help" },
      h("option", { value: "", text: "No: a live game", selected: !room.clock?.days }),
      ...[1, 2, 3, 5, 7, 10, 14].map((n) =>
        h("option", {
          value: String(n),
          text: n === 1 ? "1 day per move" : `${n} days per move`,
          selected: room.clock?.days === n,
        }),
      ),
    );
    const colour = h(
      "select",
      { name: "colour" },
      h("option", { value: "random", text: "By lot" }),
      h("option", { value: "black", text: "Black (moves first)" }),
      h("option", { value: "white", text: "White" }),
    );
    const privateBox = h("input", { type: "checkbox", name: "private" });
    // Rated games are for registered accounts (the server refuses a guest's, and says so).
    const guest = user.kind === "guest";
    const ratedBox = h("input", {
      type: "checkbox",
      name: "rated",
      disabled: guest,
      "aria-describedby": "rated-help",
    });
    const ratedHelp = h("p", {
      id: "rated-help",
      class: "muted",
      text: guest
        ? "Rated games are for registered accounts: sign up to play one."
        : "A rated game moves both players' ratings; it starts from the standard position.",
    });
    const fen = h("input", {
      name: "start_fen",
      placeholder: "B:W21-32:B1-12",
      autocomplete: "off",
      spellcheck: false,
      size: "28",
    });
    const dialog = h(
      "dialog",
      { "aria-labelledby": "open-title", onClose: () => dialog.remove() },
      h(
        "form",
        {
          onSubmit: (event) => {
            event.preventDefault();
            const message = {
              type: "open",
              room: room.slug,
              variant: variant.value,
              clock: days.value
                ? { days: Number(days.value) }
                : timed.checked
                  ? {
                      base: Math.round(Number(base.value) * 60),
                      increment: Number(increment.value) || 0,
                    }
                  : null,
              colour: colour.value,
              private: privateBox.checked,
              rated: ratedBox.checked,
            };
            if (fen.value.trim()) message.start_fen = fen.value.trim();
            openTable(message, dialog, error);
          },
        },
        h("h2", { id: "open-title", text: `Open a table in ${room.name}` }),
        h(
          "div",
          { class: "form-row" },
          h("label", {}, "Variant", variant),
          h("label", {}, "Your colour", colour),
        ),
        h(
          "fieldset",
          {},
          h("legend", { text: "Clock" }),
          h("label", { class: "inline" }, timed, "Timed game"),
          h(
            "div",
            { class: "form-row" },
            h("label", {}, "Minutes", base),
            h("label", {}, "Increment (s)", increment),
          ),
          h("p", {
            id: "clock-help",
            class: "muted",
            text: "Fischer clock: each move adds the increment.",
          }),
          h("label", {}, "Correspondence", days),
          h("p", {
            id: "days-help",
            class: "muted",
            text:
              "Days per move: the time is full again after each move, and the game waits " +
              "while you are away (your seat is kept).",
          }),
        ),
        h("label", { class: "inline" }, ratedBox, "Rated"),
        ratedHelp,
        h("label", { class: "inline" }, privateBox, "Private (only people with the link can join)"),
        h("label", {}, "Start position (PDN FEN, optional)", fen),
        error,
        h(
          "div",
          { class: "toolbar" },
          h("button", { type: "submit", class: "primary", text: "Open table" }),
          h("button", { type: "button", onClick: () => dialog.close(), text: "Cancel" }),
        ),
      ),
    );
    const syncClock = () => {
      timed.disabled = Boolean(days.value);
      base.disabled = !timed.checked || Boolean(days.value);
      increment.disabled = !timed.checked || Boolean(days.value);
    };
    timed.addEventListener("change", syncClock);
    days.addEventListener("change", syncClock);
    syncClock();
    document.body.append(dialog);
    dialog.showModal();
    variant.focus();
  }

  function openTable(message, dialog, error) {
    error.textContent = "";
    const stop = live.on("table", (snapshot) => {
      stop();
      dialog.close();
      live.adopt(snapshot.table.id);
      const invite = snapshot.table.invite;
      location.hash = `#/table/${snapshot.table.id}${invite ? `?invite=${encodeURIComponent(invite)}` : ""}`;
    });
    const sent = live.send(message, (err) => {
      stop();
      showRefusal(error, err);
    });
    if (!sent) {
      stop();
      error.textContent = "Not connected to the server; try again in a moment.";
    }
  }

  mount(
    main,
    h("div", { class: "toolbar" }, h("h1", { text: "Lobby" }), conn),
    h(
      "p",
      { class: "muted" },
      "Open a table or sit at one to play; watch any public table. ",
      h("a", { href: "#/games", text: "Browse finished games" }),
      ".",
    ),
    myGames,
    h("div", { class: "lobby-panels" }, pairing.element, computerPanel(), online.element),
    roomsBox,
  );
  drawMyGames();
  const stopWelcome = onMyGames(drawMyGames);
  const stopLobby = live.subscribeLobby(onLobby);
  const stopUser = session.subscribe(() => rooms.length && draw());
  return () => {
    stopConn();
    stopWelcome();
    stopLobby();
    stopUser();
    pairing.stop();
    online.stop();
    for (const dialog of document.querySelectorAll("dialog")) dialog.close();
  };
}

function againstText(game) {
  return game.opponent ? ` (against ${game.opponent.name})` : "";
}

/** Whose move it is in a game of the user's: " · your move", " · their move" ("" unknown). */
function turnText(game) {
  if (!game.turn || !game.colour) return "";
  return game.turn === game.colour ? " · your move" : " · their move";
}

/** How many people watch the table, in words that screen readers read as shown. */
function spectatorsBadge(table) {
  const count = typeof table.spectators === "number" ? table.spectators : 0;
  return h("div", {
    class: "muted spectators",
    dataset: { spectators: String(count) },
    text: `${count} watching`,
  });
}

function clockText(clock) {
  return clock ? formatTimeControl(clock.base, clock.increment) : "untimed";
}

function colourText(colour) {
  return { black: "creator plays Black", white: "creator plays White" }[colour] || "colours by lot";
}

function statusText(table) {
  return (
    { open: "waiting", playing: "playing", finished: "game over", closed: "closed" }[
      table.status
    ] || table.status
  );
}

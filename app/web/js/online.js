// "Who is online": the players seated in a room and connected (`GET /api/rooms/{name}/online`),
// each with their rating badge, a link to their page and a Challenge button. Read again every
// few seconds and soon after the lobby changes.

import { api } from "./api.js";
import { openChallengeDialog } from "./challenges.js";
import { h, mount } from "./dom.js";
import { ratingBadge } from "./ratings.js";
import { session } from "./session.js";

const REFRESH_MS = 10000;
const SETTLE_MS = 500; // lobby changes come in bursts: read once they settle

/** Whether the signed-in user may challenge `player` (not themselves, not the computer; guests
 * challenge nobody). */
export function mayChallenge(player) {
  const user = session.user;
  return Boolean(
    user &&
      user.kind === "registered" &&
      player.id !== user.id &&
      player.kind !== "ai" &&
      player.kind !== "imported",
  );
}

/** The panel; `setRooms(rooms)` gives it the lobby's rooms, `changed()` says the lobby moved. */
export function onlinePanel(selectedSlug) {
  let rooms = [];
  let slug = selectedSlug;
  let seq = 0;
  let settle = null;
  const picker = h("select", {
    "aria-label": "Room",
    onChange: () => {
      slug = picker.value;
      load();
    },
  });
  const list = h("div", { class: "online-list", "aria-live": "polite" });
  const heading = h("h2", { id: "online-title", text: "Who is online" });

  async function load() {
    if (!slug) return;
    const mine = ++seq;
    let body;
    try {
      body = await api.get(`/api/rooms/${encodeURIComponent(slug)}/online`);
    } catch (error) {
      if (mine === seq) mount(list, h("p", { class: "muted", text: error.message }));
      return;
    }
    if (mine !== seq) return;
    draw(body);
  }

  function draw(body) {
    const players = body.players || [];
    if (!players.length) {
      mount(list, h("p", { class: "muted", text: "Nobody is seated in this room right now." }));
      return;
    }
    mount(
      list,
      h("p", {
        class: "muted",
        text: players.length === 1 ? "1 player" : `${players.length} players`,
      }),
      h(
        "ul",
        { class: "online-players", "aria-label": "Players online in this room" },
        players.map((player) =>
          h(
            "li",
            { dataset: { player: player.name } },
            h("a", {
              href: `#/players/${encodeURIComponent(player.name)}`,
              text: player.name,
            }),
            ratingBadge(player),
            " ",
            player.table == null
              ? h("span", { class: "muted small", text: "at a private table" })
              : h("a", {
                  class: "muted small",
                  href: `#/table/${player.table}`,
                  text: `table ${player.table}`,
                }),
            mayChallenge(player)
              ? h("button", {
                  type: "button",
                  class: "small",
                  "aria-label": `Challenge ${player.name}`,
                  onClick: () => openChallengeDialog(player),
                  text: "Challenge",
                })
              : null,
          ),
        ),
      ),
    );
  }

  function setRooms(next) {
    rooms = next;
    if (!rooms.some((room) => room.slug === slug)) slug = rooms.length ? rooms[0].slug : null;
    mount(
      picker,
      rooms.map((room) =>
        h("option", { value: room.slug, text: room.name, selected: room.slug === slug }),
      ),
    );
    picker.hidden = Boolean(selectedSlug) || rooms.length < 2;
  }

  function changed() {
    clearTimeout(settle);
    settle = setTimeout(load, SETTLE_MS);
  }

  const timer = setInterval(load, REFRESH_MS);
  const stopUser = session.subscribe(() => load());
  const element = h(
    "section",
    { class: "panel online-panel", "aria-labelledby": "online-title" },
    heading,
    picker,
    list,
  );
  return {
    element,
    setRooms,
    changed,
    stop() {
      clearInterval(timer);
      clearTimeout(settle);
      stopUser();
      seq += 1;
    },
  };
}

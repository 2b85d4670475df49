// The admin page (`/api/admin`): server status, rooms, tables, tournaments (schedule, cancel),
// users (kick, ban, unban) and the audit log. Every action on rooms, tables and users asks for a
// reason, which the server writes to the audit log and shows to the people it affects; cancelling
// a tournament (`/api/tournaments`, whose reason is optional) asks for a confirmation.

import { api, query } from "./api.js";
import { formatDate, formatTimeControl, h, mount, setTitle, toast } from "./dom.js";
import { VARIANTS, variantName } from "./notation.js";
import { session } from "./session.js";
import { tournamentForm } from "./tournamentform.js";
import { TournamentTimes, kindName, playersText } from "./tournamentwords.js";

const RESULTS = [
  ["*", "Abort the game in progress"],
  ["1-0", "Black wins (1-0)"],
  ["0-1", "White wins (0-1)"],
  ["1/2-1/2", "Draw (1/2-1/2)"],
];

export async function render(main) {
  setTitle("Administration");
  const user = session.user;
  if (!user || user.role !== "admin") {
    mount(
      main,
      h("h1", { text: "Administration" }),
      h("p", {
        class: "error-text",
        role: "alert",
        text: "Only administrators may see this page.",
      }),
    );
    return null;
  }
  const status = h("div");
  const rooms = h("div");
  const tables = h("div");
  const tournaments = h("div");
  const users = h("div");
  const audit = h("div");
  const userSearch = h("input", {
    type: "search",
    name: "q",
    autocomplete: "off",
    "aria-label": "Find users by name",
  });
  const olderAudit = h("button", { type: "button", hidden: true, text: "Older entries" });
  let auditCursor = null;

  const section = (id, title, ...children) =>
    h(
      "section",
      { class: "panel", "aria-labelledby": id, dataset: { section: id } },
      h("h2", { id, text: title }),
      ...children,
    );

  mount(
    main,
    h("h1", { text: "Administration" }),
    h(
      "details",
      { class: "panel", onToggle: (event) => event.target.open && loadStatus() },
      h("summary", { text: "Server status" }),
      status,
    ),
    section("admin-rooms", "Rooms", rooms, newRoomForm()),
    section("admin-tables", "Tables", tables),
    section("admin-tournaments", "Tournaments", tournaments, newTournamentForm()),
    section(
      "admin-users",
      "Users",
      h(
        "form",
        {
          class: "toolbar",
          role: "search",
          onSubmit: (event) => {
            event.preventDefault();
            loadUsers();
          },
        },
        userSearch,
        h("button", { type: "submit", text: "Find" }),
      ),
      users,
    ),
    section("admin-audit", "Audit log", audit, olderAudit),
  );

  /** Ask for the reason (and a result where games may end), send, reload what changed. */
  async function act(label, method, path, { withResult = false, body = {}, reload }) {
    const answer = await askReason(label, withResult);
    if (!answer) return;
    try {
      await api[method](path, { ...body, ...answer });
      toast(`${label}: done`);
      await Promise.all([reload(), loadAudit()]);
    } catch (error) {
      toast(`${label}: ${error.message}`, "error");
    }
  }

  async function load(box, path, draw) {
    try {
      draw(await api.get(path));
    } catch (error) {
      mount(box, h("p", { class: "error-text", role: "alert", text: error.message }));
    }
  }

  const button = (text, label, onClick, cls = "") =>
    h("button", { type: "button", class: cls, "aria-label": label, onClick, text });

  const loadStatus = () =>
    load(status, "/api/admin/status", (s) =>
      mount(
        status,
        h(
          "dl",
          { class: "stats" },
          [
            [
              "Health",
              `${s.status} (database ${s.database}, broker ${s.broker}: ${s.broker_kind})`,
            ],
            ["Server processes", String(s.processes)],
            ["Connections", `${s.connections} (${s.connected_users} signed in)`],
            ["Games in progress", String(s.live_games)],
            ["Open tables", String(s.open_tables)],
            ["Moves in the last minute", String(s.moves_last_minute)],
            ["Mail waiting", `${s.mail_waiting} (${s.mail_given_up} given up in 7 days)`],
            ["Version", s.version],
          ].map(([term, value]) => h("div", {}, h("dt", { text: term }), h("dd", { text: value }))),
        ),
      ),
    );

  const loadRooms = () =>
    load(rooms, "/api/admin/rooms", ({ data }) =>
      mount(
        rooms,
        listTable(
          "Rooms",
          ["Room", "Variant", "Clock", "Tables", "Players", "Watching", "State", ""],
          data.map((room) =>
            h(
              "tr",
              { dataset: { room: room.slug } },
              h("td", { text: `${room.name} (${room.slug})` }),
              h("td", { text: variantName(room.variant) }),
              h("td", { text: clockText(room.clock) }),
              h("td", { text: String(room.tables) }),
              h("td", { text: String(room.players) }),
              h("td", { text: String(room.spectators) }),
              h("td", {
                text: `${room.open ? "open" : "closed"}${room.listed ? "" : ", hidden"}`,
              }),
              h(
                "td",
                {},
                room.open
                  ? button(
                      "Close",
                      `Close room ${room.name}`,
                      () =>
                        act(
                          `Close room ${room.name}`,
                          "post",
                          `/api/admin/rooms/${room.id}/close`,
                          {
                            withResult: true,
                            reload: () => Promise.all([loadRooms(), loadTables()]),
                          },
                        ),
                      "danger",
                    )
                  : button("Reopen", `Reopen room ${room.name}`, () =>
                      act(`Reopen room ${room.name}`, "patch", `/api/admin/rooms/${room.id}`, {
                        body: { open: true },
                        reload: loadRooms,
                      }),
                    ),
              ),
            ),
          ),
        ),
      ),
    );

  function newRoomForm() {
    const slug = h("input", {
      name: "slug",
      required: true,
      pattern: "[a-z0-9][a-z0-9-]*[a-z0-9]",
    });
    const name = h("input", { name: "name", required: true, maxlength: "80" });
    const variant = h(
      "select",
      { name: "variant" },
      VARIANTS.map(([value, text]) => h("option", { value, text })),
    );
    const minutes = h("input", { name: "minutes", type: "number", min: "0", step: "0.5" });
    const increment = h("input", { name: "increment", type: "number", min: "0", value: "0" });
    const form = h(
      "form",
      {
        class: "form-row",
        "aria-label": "New room",
        onSubmit: async (event) => {
          event.preventDefault();
          const base = Math.round(Number(minutes.value) * 60);
          try {
            await api.post("/api/admin/rooms", {
              slug: slug.value.trim(),
              name: name.value.trim(),
              variant: variant.value,
              clock: base > 0 ? { base, increment: Number(increment.value) || 0 } : null,
            });
            toast(`Room ${name.value} created`);
            form.reset();
            await Promise.all([loadRooms(), loadAudit()]);
          } catch (error) {
            toast(`New room: ${error.message}`, "error");
          }
        },
      },
      h("label", {}, "Address (slug)", slug),
      h("label", {}, "Name", name),
      h("label", {}, "Variant", variant),
      h("label", {}, "Minutes (empty: untimed)", minutes),
      h("label", {}, "Increment (s)", increment),
      h("button", { type: "submit", text: "Create room" }),
    );
    return h("details", {}, h("summary", { text: "New room" }), form);
  }

  const loadTables = () =>
    load(tables, "/api/admin/tables", ({ data }) =>
      mount(
        tables,
        data.length
          ? listTable(
              "Tables",
              ["Table", "Room", "Players", "Watching", "State", ""],
              data.map((t) =>
                h(
                  "tr",
                  { dataset: { table: String(t.id) } },
                  h(
                    "td",
                    {},
                    h("a", {
                      href: `#/table/${t.id}${t.invite ? `?invite=${encodeURIComponent(t.invite)}` : ""}`,
                      text: `Table ${t.id}${t.private ? " (private)" : ""}`,
                    }),
                  ),
                  h("td", { text: t.room_slug }),
                  h("td", { text: t.players.map((p) => p.name).join(", ") || "—" }),
                  h("td", { text: String(t.spectators) }),
                  h("td", { text: t.status }),
                  h(
                    "td",
                    {},
                    button(
                      "Close",
                      `Close table ${t.id}`,
                      () =>
                        act(`Close table ${t.id}`, "post", `/api/admin/tables/${t.id}/close`, {
                          withResult: t.status === "playing",
                          reload: () => Promise.all([loadTables(), loadRooms()]),
                        }),
                      "danger",
                    ),
                  ),
                ),
              ),
            )
          : h("p", { class: "muted", text: "No open table." }),
      ),
    );

  const times = new TournamentTimes();
  const loadTournaments = () =>
    load(tournaments, "/api/tournaments", ({ upcoming, running }) => {
      const listed = [...upcoming, ...running];
      for (const t of listed) times.note(t);
      mount(
        tournaments,
        listed.length
          ? listTable(
              "Tournaments",
              ["Tournament", "Kind", "Clock", "Players", "State", ""],
              listed.map((t) => {
                const actions = h("td", {});
                const ask = () =>
                  mount(
                    actions,
                    h(
                      "div",
                      { class: "toolbar" },
                      h("input", {
                        name: "cancel-reason",
                        maxlength: "200",
                        placeholder: "Why (optional)",
                        "aria-label": `Reason for cancelling ${t.name}`,
                      }),
                      button(
                        "Confirm cancelling",
                        `Confirm cancelling ${t.name}`,
                        () => cancelTournament(t, actions.querySelector("input").value.trim()),
                        "danger",
                      ),
                      button("Keep it", `Keep ${t.name}`, () => mount(actions, cancelButton)),
                    ),
                  );
                const cancelButton = button("Cancel", `Cancel tournament ${t.name}`, ask, "danger");
                mount(actions, cancelButton);
                const state = times.text(t);
                return h(
                  "tr",
                  { dataset: { tournament: String(t.id) } },
                  h("td", {}, h("a", { href: `#/tournaments/${t.id}`, text: t.name })),
                  h("td", { text: kindName(t.kind) }),
                  h("td", { text: `${clockText(t.clock)} ${t.rated ? "rated" : "casual"}` }),
                  h("td", { text: playersText(t.players) }),
                  h("td", {
                    text: t.every_minutes ? `${state}, every ${t.every_minutes} min` : state,
                  }),
                  actions,
                );
              }),
            )
          : h("p", { class: "muted", text: "No tournament is scheduled or running." }),
      );
    });

  async function cancelTournament(t, reason) {
    try {
      await api.post(`/api/tournaments/${t.id}/cancel`, reason ? { reason } : {});
      toast(`${t.name}: cancelled`);
    } catch (error) {
      toast(`Cancel ${t.name}: ${error.message}`, "error");
    }
    await Promise.all([loadTournaments(), loadAudit()]);
  }

  function newTournamentForm() {
    return h(
      "details",
      {},
      h("summary", { text: "New tournament" }),
      tournamentForm({
        admin: true,
        label: "New tournament",
        onDone: (t) => {
          toast(`Tournament ${t.name} created`);
          loadTournaments();
        },
      }),
    );
  }

  const loadUsers = () =>
    load(
      users,
      `/api/admin/users${query({ q: userSearch.value.trim(), limit: 50 })}`,
      ({ data, count }) =>
        mount(
          users,
          h("p", {
            class: "muted",
            text: `${count} ${count === 1 ? "user" : "users"}${count > data.length ? ", first 50 shown" : ""}`,
          }),
          listTable(
            "Users",
            ["Name", "Kind", "Role", "State", "Last seen", ""],
            data.map((u) =>
              h(
                "tr",
                { dataset: { user: u.name } },
                h(
                  "td",
                  {},
                  h("a", { href: `#/players/${encodeURIComponent(u.name)}`, text: u.name }),
                ),
                h("td", { text: u.kind }),
                h("td", { text: u.role }),
                h("td", {
                  text: u.banned
                    ? `banned${u.ban_reason ? `: ${u.ban_reason}` : ""}`
                    : u.connected
                      ? "online"
                      : "offline",
                }),
                h("td", { text: formatDate(u.last_seen_at) }),
                h("td", {}, userActions(u)),
              ),
            ),
          ),
        ),
    );

  /** Kick (when connected), ban or unban; never on one's own account, and no ban for the
   * computer's accounts (the server refuses it: `ai_account`). */
  function userActions(u) {
    if (u.id === user.id) return null;
    const post = (verb, label) => () =>
      act(label, "post", `/api/admin/users/${u.id}/${verb}`, { reload: loadUsers });
    const banning =
      u.kind === "ai"
        ? null
        : u.banned
          ? button("Unban", `Unban ${u.name}`, post("unban", `Unban ${u.name}`))
          : button("Ban", `Ban ${u.name}`, post("ban", `Ban ${u.name}`), "danger");
    return h(
      "div",
      { class: "toolbar" },
      u.connected ? button("Kick", `Kick ${u.name}`, post("kick", `Kick ${u.name}`)) : null,
      banning,
    );
  }

  const auditBody = h("tbody");
  async function loadAudit(more = false) {
    if (!more) auditCursor = null;
    try {
      const page = await api.get(`/api/admin/audit${query({ limit: 50, cursor: auditCursor })}`);
      const rows = page.data.map((e) =>
        h(
          "tr",
          { dataset: { action: e.action } },
          h("td", { text: formatDate(e.at) }),
          h("td", { text: e.actor || "" }),
          h("td", { text: e.action }),
          h("td", {}, auditTarget(e)),
          h("td", { text: e.note || "" }),
        ),
      );
      if (more) auditBody.append(...rows);
      else auditBody.replaceChildren(...rows);
      auditCursor = page.next_cursor;
      olderAudit.hidden = !auditCursor;
      mount(
        audit,
        auditBody.children.length
          ? listTable("Audit log", ["When", "Who", "Action", "Target", "Reason"], auditBody)
          : h("p", { class: "muted", text: "No administrator action yet." }),
      );
    } catch (error) {
      mount(audit, h("p", { class: "error-text", role: "alert", text: error.message }));
    }
  }
  olderAudit.addEventListener("click", () => loadAudit(true));

  await Promise.all([loadRooms(), loadTables(), loadTournaments(), loadUsers(), loadAudit()]);
  return null;
}

/** What an entry is about: a user's or a room's name (a user's linking to their page) with
 * the id beside it, else the kind and the id ("table 7"). */
function auditTarget(e) {
  const id = `${e.target_type} ${e.target_id ?? ""}`.trim();
  if (!e.target_name) return id;
  const name =
    e.target_type === "user"
      ? h("a", { href: `#/players/${encodeURIComponent(e.target_name)}`, text: e.target_name })
      : e.target_name;
  return h("span", {}, name, h("span", { class: "muted", text: ` (${id})` }));
}

function clockText(clock) {
  return clock ? formatTimeControl(clock.base, clock.increment) : "untimed";
}

/** A captioned table; `body` is rows or a ready <tbody>. */
function listTable(caption, headings, body) {
  return h(
    "div",
    { class: "table-scroll" },
    h(
      "table",
      { class: "list" },
      h("caption", { class: "visually-hidden", text: caption }),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          headings.map((t) => h("th", { scope: "col", text: t })),
        ),
      ),
      body instanceof HTMLElement && body.tagName === "TBODY" ? body : h("tbody", {}, body),
    ),
  );
}

/**
 * A modal asking why (and, where games may end, with which result).
 * Resolves with `{reason[, result]}`, or null when cancelled.
 */
function askReason(label, withResult) {
  return new Promise((resolve) => {
    const reason = h("input", {
      name: "reason",
      required: true,
      maxlength: "200",
      autocomplete: "off",
    });
    const result = h(
      "select",
      { name: "result" },
      RESULTS.map(([value, text]) => h("option", { value, text })),
    );
    let answer = null;
    const dialog = h(
      "dialog",
      {
        "aria-labelledby": "reason-title",
        onClose: () => {
          dialog.remove();
          resolve(answer);
        },
      },
      h(
        "form",
        {
          onSubmit: (event) => {
            event.preventDefault();
            const text = reason.value.trim();
            if (!text) return;
            answer = withResult ? { reason: text, result: result.value } : { reason: text };
            dialog.close();
          },
        },
        h("h2", { id: "reason-title", text: label }),
        h("label", {}, "Reason (shown to those affected, kept in the audit log)", reason),
        withResult ? h("label", {}, "Game in progress", result) : null,
        h(
          "div",
          { class: "toolbar" },
          h("button", { type: "submit", class: "danger", text: "Confirm" }),
          h("button", { type: "button", onClick: () => dialog.close(), text: "Cancel" }),
        ),
      ),
    );
    document.body.append(dialog);
    dialog.showModal();
    reason.focus();
  });
}

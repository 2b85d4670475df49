// The inbox (`#/inbox`): your notices (your move and time running out in a correspondence game,
// a correspondence game started or ended, a challenge, a tournament about to start), newest
// first, read once the page has shown them; and your e-mail: the address (confirmed by the link
// mailed to it) and which notices are mailed. The header's Inbox link counts the unread ones,
// updated by the `notification` message the server pushes to every page of yours; a notice
// that comes while the tab is hidden is shown by the browser too (desktop.js).

import { api, query } from "./api.js";
import { formatDate, h, mount, setTitle } from "./dom.js";
import { notify } from "./desktop.js";
import { live } from "./live.js";
import { session } from "./session.js";

const PAGE = 30;
// Those the browser shows as they come (while the tab is hidden): a game's start, your move and
// a challenge have theirs already (mygames.js, challenges.js).
const SHOWN_BY_BROWSER = new Set([
  "time_alarm",
  "game_ended",
  "tournament_soon",
  "tournament_cancelled",
]);

let unread = 0;
let badge = null;
const listeners = new Set();

function setUnread(count) {
  unread = Math.max(0, count);
  if (badge) {
    badge.textContent = unread ? String(unread) : "";
    badge.hidden = unread === 0;
    badge.parentElement.setAttribute(
      "aria-label",
      unread ? `Inbox, ${unread} unread` : "Inbox, nothing unread",
    );
  }
}

/** Where a notice leads. */
function hrefOf(notice) {
  const data = notice.data || {};
  if (notice.kind.startsWith("tournament_")) return `#/tournaments/${data.tournament}`;
  if (notice.kind === "challenge") return "#/";
  return data.table ? `#/table/${data.table}` : "#/";
}

/** The header's Inbox link with its unread count; kept up to date while signed in. */
export function startInbox(container) {
  badge = h("span", { class: "inbox-count", hidden: true });
  const link = h("a", { href: "#/inbox", class: "inbox-link" }, "Inbox ", badge);
  container.append(link);
  session.subscribe(async (user) => {
    link.hidden = !user;
    setUnread(0);
    if (!user) return;
    try {
      setUnread((await api.get(`/api/notifications${query({ limit: 1 })}`)).unread);
    } catch {
      // Counted again at the next notice.
    }
  });
  live.on("notification", ({ notification }) => {
    setUnread(unread + 1);
    for (const listener of listeners) listener(notification);
    if (SHOWN_BY_BROWSER.has(notification.kind)) {
      notify("Checkers", notification.text, {
        href: hrefOf(notification).replace(/^#/, ""),
        tag: `notice-${notification.id}`,
      });
    }
  });
}

function noticeItem(notice) {
  return h(
    "li",
    { class: notice.read ? "notice" : "notice unread", dataset: { kind: notice.kind } },
    h("a", { href: hrefOf(notice), text: notice.text }),
    h("span", { class: "muted", text: ` · ${formatDate(new Date(notice.at).toISOString())}` }),
  );
}

/** The e-mail part of the page: the address, its confirmation, the kinds mailed. */
function emailSection() {
  const section = h("section", { class: "panel", "aria-labelledby": "email-title" });
  const error = h("p", { class: "error-text", role: "alert" });
  const draw = (shown) => {
    if (!shown.enabled) {
      mount(
        section,
        h("h2", { id: "email-title", text: "E-mail" }),
        h("p", { class: "muted", text: "This server sends no e-mail." }),
      );
      return;
    }
    const address = h("input", {
      type: "email",
      name: "email",
      autocomplete: "email",
      value: shown.pending || shown.address || "",
    });
    const status = shown.pending
      ? `A link was mailed to ${shown.pending}: open it and press Confirm.`
      : shown.address
        ? `Mail goes to ${shown.address}.`
        : "No address: you get no mail.";
    const boxes = shown.kinds.map(({ kind, name }) =>
      h(
        "label",
        { class: "inline" },
        h("input", {
          type: "checkbox",
          name: kind,
          checked: !shown.off.includes(kind),
          disabled: !shown.address,
          onChange: async () => {
            const off = boxes
              .map((label) => label.querySelector("input"))
              .filter((box) => !box.checked)
              .map((box) => box.name);
            try {
              draw(await api.put("/api/account/email/kinds", { off }));
            } catch (err) {
              error.textContent = err.message;
            }
          },
        }),
        `Mail me about ${name}`,
      ),
    );
    mount(
      section,
      h("h2", { id: "email-title", text: "E-mail" }),
      h("p", { role: "status", text: status }),
      h(
        "form",
        {
          onSubmit: async (event) => {
            event.preventDefault();
            error.textContent = "";
            try {
              draw(await api.put("/api/account/email", { address: address.value }));
            } catch (err) {
              error.textContent = err.message;
            }
          },
        },
        h("label", {}, "Address", address),
        h("button", { type: "submit", text: "Send the confirmation link" }),
      ),
      h("fieldset", {}, h("legend", { text: "Mail me" }), ...boxes),
      error,
    );
  };
  api.get("/api/account/email").then(draw, (err) => {
    mount(section, h("h2", { id: "email-title", text: "E-mail" }), h("p", { text: err.message }));
  });
  return section;
}

export async function render(container) {
  setTitle("Inbox");
  if (!session.user) {
    mount(container, h("h1", { text: "Inbox" }), h("p", { text: "Sign in to see your inbox." }));
    return null;
  }
  const list = h("ul", { class: "notices", "aria-label": "Notices" });
  const more = h("button", { type: "button", text: "Older", hidden: true });
  let oldest = null;
  const load = async () => {
    const page = await api.get(`/api/notifications${query({ limit: PAGE, before: oldest })}`);
    list.append(...page.data.map(noticeItem));
    if (page.data.length) oldest = page.data[page.data.length - 1].id;
    more.hidden = page.data.length < PAGE;
    if (!list.children.length) list.append(h("li", { class: "muted", text: "Nothing yet." }));
    setUnread((await api.post("/api/notifications/read", {})).unread);
  };
  more.addEventListener("click", load);
  const registered = session.user.kind === "registered";
  mount(
    container,
    h("h1", { text: "Inbox" }),
    list,
    more,
    registered ? emailSection() : h("p", { class: "muted", text: "E-mail is for registered accounts." }),
  );
  await load();
  const onNotice = (notice) => {
    list.querySelector(".muted")?.remove();
    list.prepend(noticeItem(notice));
    api.post("/api/notifications/read", { ids: [notice.id] }).then(
      ({ unread: left }) => setUnread(left),
      () => {},
    );
  };
  listeners.add(onNotice);
  return () => listeners.delete(onNotice);
}

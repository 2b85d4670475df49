// The websocket client: one connection for the whole page, automatic reconnection with backoff,
// heartbeats, and per-table version tracking so a reconnect resumes with the missed events
// (`watch` with `since` and `epoch`) or a fresh snapshot.

import { getToken, setToken } from "./api.js";
import { h } from "./dom.js";

const PING_EVERY_MS = 20000;
const PONG_TIMEOUT_MS = 10000;
const MAX_BACKOFF_MS = 10000;

class Live {
  constructor() {
    this.socket = null;
    this.state = "idle"; // idle | connecting | open | reconnecting | closed
    this.attempt = 0;
    this.refCounter = 0;
    this.user = null;
    this.playing = []; // [{table, game}] where this user has a game in progress
    this.clockOffset = 0; // server clock minus ours, from `welcome`
    this.limits = {}; // the server's limits, from `welcome` (chat_max_length…)
    this.listeners = new Map(); // type -> Set(fn); "*" gets everything
    this.stateListeners = new Set();
    // table id -> {v, epoch, invite, handlers, onError}: a table page and the background watch
    // of the user's own games may follow the same table; it is unwatched when both let go.
    this.tables = new Map();
    this.lobbyHandlers = new Set();
    this.pending = new Map(); // ref -> onError
    this.retryTimer = null;
    this.pingTimer = null;
    this.pongTimer = null;
    this.closeReason = "";
    this.tokenRefused = false;
    this.socketToken = null; // the token the current socket was opened with
  }

  /** Open the connection if it is not open; called by pages that need live data. */
  ensure() {
    if (this.state === "idle" || this.state === "closed") this.connect();
  }

  /** Reconnect with the current token, e.g. after signing in or out. */
  restart() {
    if (this.socket) {
      this.socket.onclose = null;
      this.socket.close(1000);
      this.socket = null;
    }
    this.stopHeartbeat();
    clearTimeout(this.retryTimer);
    this.attempt = 0;
    // A signed-in user stays connected on every page, to hear of their own games.
    if (this.tables.size || this.lobbyHandlers.size || getToken()) this.connect();
    else this.setState("idle");
  }

  connect() {
    clearTimeout(this.retryTimer);
    const token = getToken();
    this.socketToken = token;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    // The token goes as a subprotocol, never in the URL (which proxies and servers log); the
    // server answers with "checkers" (docs/protocol.md, "Connecting").
    const protocols = token ? ["checkers", `token.${token}`] : ["checkers"];
    this.setState(this.attempt === 0 ? "connecting" : "reconnecting");
    const socket = new WebSocket(`${scheme}://${location.host}/ws`, protocols);
    this.socket = socket;
    socket.onmessage = (event) => this.receive(event.data);
    socket.onclose = (event) => this.onClose(event);
    socket.onerror = () => {};
  }

  onClose(event) {
    this.socket = null;
    this.stopHeartbeat();
    if (event.code === 1008 && this.tokenRefused) {
      // The token expired or was revoked: carry on signed out, as a spectator.
      this.tokenRefused = false;
      // Another tab may have signed in meanwhile (the storage is shared): keep its token.
      if (getToken() === this.socketToken) setToken(null);
      this.emit("token_refused", { message: this.closeReason });
      this.closeReason = "";
      this.attempt = 0;
      if (!this.socket) this.connect();
      return;
    }
    // Other policy closes (kicked, banned, flooding) would fail again at once: say so and stop.
    if (event.code === 1008) {
      this.closeReason = this.closeReason || event.reason || "The server closed the connection.";
      this.setState("closed");
      return;
    }
    this.attempt += 1;
    const delay =
      Math.min(MAX_BACKOFF_MS, 500 * 2 ** (this.attempt - 1)) * (0.75 + Math.random() / 2);
    this.setState("reconnecting");
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.type === "welcome") {
      this.user = message.user;
      this.playing = message.playing || [];
      this.limits = message.limits || {};
      if (typeof message.server_time === "number")
        this.clockOffset = message.server_time - Date.now();
      this.attempt = 0;
      this.closeReason = "";
      this.setState("open");
      this.startHeartbeat();
      this.resubscribe();
    } else if (message.type === "pong") {
      clearTimeout(this.pongTimer);
    } else if (message.type === "error") {
      // At connect, or later unprompted (a ban): the token is no good any more.
      if (message.code === "unauthorized" && (this.state !== "open" || message.ref === undefined)) {
        this.closeReason = message.message;
        // Judged by this socket's token: another tab that signed out has already removed it
        // from the shared storage.
        this.tokenRefused = Boolean(this.socketToken);
      }
      const onError = message.ref !== undefined && this.pending.get(message.ref);
      if (onError) {
        this.pending.delete(message.ref);
        onError(message);
      }
    } else if (message.type === "kicked") {
      this.closeReason = message.reason
        ? `Removed: ${message.reason}`
        : "Removed by an administrator.";
    }
    this.routeTableEvent(message);
    if (["lobby", "lobby_table", "lobby_table_removed", "room_closed"].includes(message.type)) {
      for (const handler of this.lobbyHandlers) handler(message);
    }
    this.emit(message.type, message);
    this.emit("*", message);
  }

  /** Keep per-table versions; a gap means events were missed: ask for them again. */
  routeTableEvent(message) {
    const id = message.type === "table" ? message.table && message.table.id : message.table;
    const entry = typeof id === "number" ? this.tables.get(id) : undefined;
    if (!entry || message.v === undefined) {
      if (entry && message.type === "kicked") deliver(entry, message);
      return;
    }
    if (message.type === "table" || message.type === "synced") {
      entry.v = message.v;
      entry.epoch = message.epoch;
      deliver(entry, message);
      return;
    }
    if (entry.v !== null && message.v <= entry.v) return; // already applied
    if (entry.v !== null && message.v > entry.v + 1) {
      this.sendWatch(id, entry);
      return;
    }
    entry.v = message.v;
    deliver(entry, message);
  }

  watchMessage(id, entry) {
    const message = { type: "watch", table: id };
    if (entry.v !== null && entry.epoch) {
      message.since = entry.v;
      message.epoch = entry.epoch;
    }
    if (entry.invite) message.invite = entry.invite;
    return message;
  }

  resubscribe() {
    if (this.lobbyHandlers.size) this.send({ type: "subscribe_lobby" });
    for (const [id, entry] of this.tables) this.sendWatch(id, entry);
  }

  /**
   * Follow a table: `handler` gets its snapshot and every event, across reconnects;
   * `onError` gets a refusal (no such table, a private table without its invite). Several
   * holders may follow one table (the table page, the background watch of the user's games):
   * a new holder asks for a fresh snapshot (unless `quiet`: it only keeps the watch alive), and
   * `unwatch` goes once the last one lets go.
   */
  watchTable(id, handler, { invite = null, onError = null, quiet = false } = {}) {
    let entry = this.tables.get(id);
    const followed = Boolean(entry);
    if (!entry) {
      entry = { v: null, epoch: null, invite, handlers: new Set(), onError: null };
      this.tables.set(id, entry);
    }
    const holder = { handler, onError };
    entry.handlers.add(holder);
    if (invite) entry.invite = invite;
    this.ensure();
    if (followed && quiet) return this.release(id, entry, holder);
    // A holder that joins a table already followed needs its own snapshot.
    entry.v = null;
    entry.epoch = null;
    if (this.state === "open") this.sendWatch(id, entry);
    return this.release(id, entry, holder);
  }

  release(id, entry, holder) {
    return () => {
      if (this.tables.get(id) !== entry || !entry.handlers.delete(holder)) return;
      if (entry.handlers.size) return;
      this.tables.delete(id);
      if (this.state === "open") this.send({ type: "unwatch", table: id });
    };
  }

  /** True while some holder follows table `id`. */
  watching(id) {
    return this.tables.has(id);
  }

  sendWatch(id, entry) {
    const onError = (err) => {
      for (const holder of [...entry.handlers]) if (holder.onError) holder.onError(err);
    };
    this.send(this.watchMessage(id, entry), onError);
  }

  /** Ask for a fresh snapshot of a watched table (e.g. after `stale_ply`). */
  refreshTable(id) {
    const entry = this.tables.get(id);
    if (!entry) return;
    entry.v = null;
    entry.epoch = null;
    this.sendWatch(id, entry);
  }

  subscribeLobby(handler) {
    this.lobbyHandlers.add(handler);
    this.ensure();
    if (this.state === "open") this.send({ type: "subscribe_lobby" });
    return () => {
      this.lobbyHandlers.delete(handler);
      if (!this.lobbyHandlers.size && this.state === "open")
        this.send({ type: "unsubscribe_lobby" });
    };
  }

  /**
   * Send a message; `onError(error)` gets the server's error for it, if any.
   * Returns false when the connection is down (the caller tells the user).
   */
  send(message, onError = null) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) return false;
    if (onError) {
      const ref = ++this.refCounter;
      message = { ...message, ref };
      this.pending.set(ref, onError);
      setTimeout(() => this.pending.delete(ref), 30000);
    }
    this.socket.send(JSON.stringify(message));
    return true;
  }

  /** The server's current Unix time in ms, for its deadlines (`claim_after`). */
  serverNow() {
    return Date.now() + this.clockOffset;
  }

  on(type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type).add(fn);
    return () => this.listeners.get(type).delete(fn);
  }

  emit(type, message) {
    for (const fn of this.listeners.get(type) || []) fn(message);
  }

  onState(fn) {
    this.stateListeners.add(fn);
    fn(this.state);
    return () => this.stateListeners.delete(fn);
  }

  setState(state) {
    this.state = state;
    for (const fn of this.stateListeners) fn(state);
  }

  startHeartbeat() {
    this.stopHeartbeat();
    this.pingTimer = setInterval(() => {
      if (!this.send({ type: "ping", t: Date.now() })) return;
      clearTimeout(this.pongTimer);
      this.pongTimer = setTimeout(() => this.socket && this.socket.close(4000), PONG_TIMEOUT_MS);
    }, PING_EVERY_MS);
  }

  stopHeartbeat() {
    clearInterval(this.pingTimer);
    clearTimeout(this.pongTimer);
  }
}

function deliver(entry, message) {
  for (const holder of [...entry.handlers]) holder.handler(message);
}

export const live = new Live();

/**
 * The connection badge shown by live pages: its state in words, and a Reconnect button once
 * the server has refused the connection. Returns [element, stop].
 */
export function connectionBadge() {
  const label = h("span", { class: "conn", role: "status", "aria-label": "Connection" });
  const retry = h("button", {
    type: "button",
    hidden: true,
    onClick: () => live.restart(),
    text: "Reconnect",
  });
  const stop = live.onState((state) => {
    label.dataset.state = state;
    label.textContent = describeConnection(state);
    retry.hidden = state !== "closed";
  });
  return [h("span", { class: "conn-box" }, label, retry), stop];
}

/** Words for the connection state, shown next to the board and the lobby. */
function describeConnection(state) {
  return (
    {
      idle: "Offline",
      connecting: "Connecting…",
      open: "Connected",
      reconnecting: "Reconnecting…",
      closed: live.closeReason || "Disconnected",
    }[state] || state
  );
}

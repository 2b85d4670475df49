// The websocket client: one connection for the whole page, automatic reconnection with backoff,
// heartbeats, and per-table version tracking so a reconnect resumes with the missed events
// (`watch` with `since` and `epoch`) or a fresh snapshot.
//
// A link can stall without closing (a dead Wi-Fi, a sleeping NAT): the socket stays "open" and
// what is sent waits in its buffer. So the page pings every PING_EVERY_MS; a ping unanswered for
// PONG_TIMEOUT_MS, with nothing else heard meanwhile, means the link stalled: the socket is
// dropped at once (a stalled socket's close would take a minute to complete) and a new one is
// opened. The browser's offline event does the same without waiting. The pongs also give the
// round trip (the lag shown beside the board) and the server's time, which the clocks count from.

import { getToken, setToken } from "./api.js";
import { h } from "./dom.js";

const PING_EVERY_MS = 1500;
const PONG_TIMEOUT_MS = 2500;
const WATCHDOG_EVERY_MS = 250;
/** A socket that has not said `welcome` by then is given up and another one tried. */
const CONNECT_TIMEOUT_MS = 6000;
const MAX_BACKOFF_MS = 10000;
/** The clock offset is taken from the pong with the shortest round trip among the last ones. */
const OFFSET_SAMPLES = 8;

/** Milliseconds on a clock that never goes back, on the Unix epoch's scale. */
function now() {
  return performance.timeOrigin + performance.now();
}

class Live {
  constructor() {
    this.socket = null;
    this.state = "idle"; // idle | connecting | open | reconnecting | closed
    this.attempt = 0;
    this.refCounter = 0;
    this.user = null;
    this.playing = []; // [{table, game}] where this user has a game in progress
    this.clockOffset = 0; // server clock minus ours, from `welcome` and the pongs
    this.offsetSamples = []; // [{rtt, offset}] from the last pongs
    this.rtt = null; // the last measured round trip, ms
    this.lagListeners = new Set();
    this.lastHeard = 0; // when the socket last said anything (our clock, ms)
    this.pingSentAt = null; // when the ping still unanswered was sent
    this.connectTimer = null;
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
    clearTimeout(this.connectTimer);
    const token = getToken();
    this.socketToken = token;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    // The token goes as a subprotocol, never in the URL (which proxies and servers log); the
    // server answers with "checkers" (docs/protocol.md, "Connecting").
    const protocols = token ? ["checkers", `token.${token}`] : ["checkers"];
    // After a stall or going offline the page keeps saying so until the link is back.
    if (!["stalled", "offline"].includes(this.state))
      this.setState(this.attempt === 0 ? "connecting" : "reconnecting");
    const socket = new WebSocket(`${scheme}://${location.host}/ws`, protocols);
    this.socket = socket;
    socket.onmessage = (event) => this.receive(event.data);
    socket.onclose = (event) => this.onClose(event);
    socket.onerror = () => {};
    // A handshake through a stalled link would wait minutes: try again sooner.
    this.connectTimer = setTimeout(() => {
      if (this.socket === socket && this.state !== "open") this.drop(this.state);
    }, CONNECT_TIMEOUT_MS);
  }

  /**
   * Give up the current socket without waiting for it to close (a stalled link never completes
   * the closing handshake), say `state` ("stalled", "offline"), and try again.
   */
  drop(state) {
    const socket = this.socket;
    this.socket = null;
    this.stopHeartbeat();
    clearTimeout(this.connectTimer);
    if (socket) {
      socket.onclose = null;
      socket.onmessage = null;
      try {
        socket.close(4000);
      } catch {
        // already closing
      }
    }
    this.setRtt(null);
    this.setState(state);
    clearTimeout(this.retryTimer);
    if (state === "offline") return; // the online event brings the connection back
    this.attempt += 1;
    const delay = this.attempt <= 1 ? 0 : this.backoff();
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  backoff() {
    return Math.min(MAX_BACKOFF_MS, 500 * 2 ** (this.attempt - 1)) * (0.75 + Math.random() / 2);
  }

  onClose(event) {
    this.socket = null;
    this.stopHeartbeat();
    clearTimeout(this.connectTimer);
    this.setRtt(null);
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
    if (this.state === "offline") return; // the online event brings the connection back
    this.attempt += 1;
    this.setState("reconnecting");
    this.retryTimer = setTimeout(() => this.connect(), this.backoff());
  }

  receive(text) {
    this.lastHeard = now();
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
      if (typeof message.server_time === "number" && !this.offsetSamples.length)
        this.clockOffset = message.server_time - now();
      this.attempt = 0;
      this.closeReason = "";
      clearTimeout(this.connectTimer);
      this.setState("open");
      this.startHeartbeat();
      this.resubscribe();
    } else if (message.type === "pong") {
      this.onPong(message);
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
      // Notices outside the numbered events: a removal, the spectator count.
      if (entry && ["kicked", "spectators"].includes(message.type)) deliver(entry, message);
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
    const message = { type: "watch", table: id, spectators: true };
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

  /**
   * The server watches table `id` for this connection already (its `open` or `play_ai`
   * answered with the snapshot): hold that watch until the page leaves the table's address,
   * so that a page left before the table's own page took the table over (a quick click away)
   * still sends `unwatch`. Nothing is sent now.
   */
  adopt(id) {
    let entry = this.tables.get(id);
    if (!entry) {
      entry = { v: null, epoch: null, invite: null, handlers: new Set(), onError: null };
      this.tables.set(id, entry);
    }
    const holder = { handler: () => {}, onError: null };
    entry.handlers.add(holder);
    const release = this.release(id, entry, holder);
    const onTable = new RegExp(`^#/table/${id}(\\?|$)`);
    const leave = () => {
      if (onTable.test(location.hash)) return;
      window.removeEventListener("hashchange", leave);
      release();
    };
    window.addEventListener("hashchange", leave);
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

  /** The server's current Unix time in ms, for its clocks and deadlines (`claim_after`). */
  serverNow() {
    return now() + this.clockOffset;
  }

  /**
   * A pong: the round trip of its ping, and the server's time then. The server read its time
   * about half a round trip after the ping left; the shortest round trip of the last few gives
   * the offset with the least doubt.
   */
  onPong(message) {
    if (typeof message.t !== "number") return;
    const received = now();
    const rtt = received - message.t;
    if (message.t === this.pingSentAt) this.pingSentAt = null;
    if (rtt < 0 || rtt > 60000) return;
    if (typeof message.server_time === "number") {
      this.offsetSamples.push({ rtt, offset: message.server_time - (message.t + rtt / 2) });
      if (this.offsetSamples.length > OFFSET_SAMPLES) this.offsetSamples.shift();
      const best = this.offsetSamples.reduce((a, b) => (b.rtt < a.rtt ? b : a));
      this.clockOffset = best.offset;
    }
    this.setRtt(rtt);
  }

  setRtt(rtt) {
    this.rtt = rtt;
    for (const fn of this.lagListeners) fn(rtt);
  }

  /** Call `fn(rtt)` with each measured round trip (null while disconnected). */
  onLag(fn) {
    this.lagListeners.add(fn);
    fn(this.rtt);
    return () => this.lagListeners.delete(fn);
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
    this.lastHeard = now();
    this.ping();
    this.pingTimer = setInterval(() => this.ping(), PING_EVERY_MS);
    this.pongTimer = setInterval(() => this.watchdog(), WATCHDOG_EVERY_MS);
  }

  ping() {
    // One ping at a time: the one unanswered is the one the watchdog times.
    if (this.pingSentAt !== null) return;
    const t = now();
    if (this.send({ type: "ping", t })) this.pingSentAt = t;
  }

  /** A ping unanswered for too long, and nothing else heard since it left: the link stalled. */
  watchdog() {
    const sent = this.pingSentAt;
    if (sent === null || this.state !== "open") return;
    if (now() - sent > PONG_TIMEOUT_MS && this.lastHeard < sent) this.drop("stalled");
  }

  stopHeartbeat() {
    clearInterval(this.pingTimer);
    clearInterval(this.pongTimer);
    this.pingSentAt = null;
  }

  /** The browser says it lost or found the network: act at once rather than at the next ping. */
  watchNetwork() {
    window.addEventListener("offline", () => {
      if (this.socket || this.state !== "idle") this.drop("offline");
    });
    window.addEventListener("online", () => {
      if (this.state !== "offline") return;
      this.attempt = 0;
      this.setState("reconnecting");
      this.connect();
    });
  }
}

function deliver(entry, message) {
  for (const holder of [...entry.handlers]) holder.handler(message);
}

export const live = new Live();
live.watchNetwork();

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

/**
 * The lag beside the connection badge: the last round trip to the server, in milliseconds, with
 * one to four bars as lichess shows it. Returns [element, stop].
 */
export function lagBadge() {
  const label = h("span", { class: "lag", role: "status", "aria-label": "Lag" });
  const stop = live.onLag((rtt) => {
    label.hidden = rtt === null;
    if (rtt === null) return;
    const ms = Math.round(rtt);
    const bars = ms < 150 ? 4 : ms < 300 ? 3 : ms < 600 ? 2 : 1;
    label.dataset.bars = String(bars);
    label.title = `Round trip to the server: ${ms} ms`;
    label.textContent = `${"▮".repeat(bars)}${"▯".repeat(4 - bars)} ${ms} ms`;
    label.setAttribute("aria-label", `Lag: ${ms} ms`);
  });
  return [label, stop];
}

/** Words for the connection state, shown next to the board and the lobby. */
function describeConnection(state) {
  return (
    {
      idle: "Offline",
      connecting: "Connecting…",
      open: "Connected",
      reconnecting: "Reconnecting…",
      stalled: "No answer from the server: reconnecting…",
      offline: "Offline: no network",
      closed: live.closeReason || "Disconnected",
    }[state] || state
  );
}

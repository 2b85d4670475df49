// The board component: 32 dark squares as buttons, men and crowned kings, square numbers or
// chess coordinates, selection by click-click, drag or keyboard, moves animated. It never
// computes rules: it only highlights the legal moves the server sent (or the premoves it is
// given) and reports the chosen move text. A move the server has not acknowledged yet is shown
// made, marked pending; a premove is marked on its squares.
//
// A slide is shown to its end: a redraw (the computer's answer 30 ms later, a chat line) keeps
// the pieces that stay where they are, the sliding one included.

import { h } from "./dom.js";
import { FILES, movePath, parseFen, rowColToSquare, squareToRowCol } from "./notation.js";
import { BOARD_THEMES, PIECE_THEMES, prefs } from "./prefs.js";

const DRAG_THRESHOLD_PX = 5;
const SVG_NS = "http://www.w3.org/2000/svg";
let arrowIds = 0; // each board's arrow head has an id of its own
/** A move slides, and the men it takes fade, within this time. */
export const MOVE_ANIMATION_MS = 180;

export const CAPTURE_NOTICE = "Capture is mandatory";

/**
 * A board view. `onMove(text)` receives a legal move; `onPremove(text)` a premove (chosen while
 * `premoving` is set, among the `legalMoves` given then); `onNotice(text)` explains a refusal.
 */
export class Board {
  constructor({
    label = "Board",
    onMove = () => {},
    onPremove = () => {},
    onNotice = () => {},
    onSquare = null, // (square) => true when the page took the click (a position being set up)
  } = {}) {
    this.onSquare = onSquare;
    this.onMove = onMove;
    this.onPremove = onPremove;
    this.onNotice = onNotice;
    this.state = {
      pieces: new Map(),
      turn: "black",
      flipped: false,
      lastMove: [],
      legalMoves: [],
      interactive: false,
      premoving: false, // the legal moves on offer are premoves (the opponent is to move)
      premove: null, // the premove waiting for the opponent's move: marked on its squares
      pending: null, // a move sent and not acknowledged yet: shown made, marked pending
      arrow: null, // a move drawn as an arrow over the board (the analysis's best move)
      // "numbers" (square numbers 1–32, the checkers convention) or "coordinates" (a–h, 1–8).
      labels: prefs.labels,
    };
    this.droppedMove = null; // the move just played by a drag: already where it belongs
    this.dropping = false;
    this.fen = null;
    this.selected = null;
    this.steps = [];
    this.focusSquare = null;
    this.drag = null;
    this.suppressClick = false;
    this.cells = new Map();
    this.arrowId = ++arrowIds;
    this.displayed = new Map(); // the pieces drawn: the position, with a pending move made
    this.element = h("div", { class: "board", role: "group", "aria-label": label });
    this.grid = h("div", { class: "board-grid" });
    this.arrowLayer = document.createElementNS(SVG_NS, "svg");
    this.arrowLayer.setAttribute("class", "board-arrow");
    this.arrowLayer.setAttribute("viewBox", "0 0 8 8");
    this.arrowLayer.setAttribute("aria-hidden", "true");
    this.element.append(this.grid, this.arrowLayer);
    this.buildCells();
    this.grid.addEventListener("keydown", (event) => this.onKeyDown(event));
    this.grid.addEventListener("pointerdown", (event) => this.onPointerDown(event));
  }

  /**
   * Update what is shown; any key left out keeps its value. With `animate: true` a new position
   * reached by `lastMove` (or a `pending` move just made) is shown with the move sliding and the
   * taken men fading.
   */
  set(options) {
    const moving = options.fen !== undefined && options.fen !== this.fen;
    const { animate = false, ...rest } = options;
    const before = this.displayed;
    const next = { ...this.state, ...rest };
    // A redraw with the same position and moves (a chat line, a draw offer) keeps the selection.
    const choice = `${this.fen}|${this.state.legalMoves.map((m) => m.text).join()}`;
    if (options.fen !== undefined) {
      this.fen = options.fen;
      const { turn, pieces } = parseFen(options.fen);
      next.pieces = pieces;
      next.turn = turn;
    }
    if (options.lastMove !== undefined) {
      next.lastMove = options.lastMove ? movePath(options.lastMove) : [];
    }
    if (options.legalMoves !== undefined) {
      next.legalMoves = [...new Set(options.legalMoves || [])].map((text) => ({
        text,
        path: movePath(text),
      }));
    }
    const newPending = Boolean(next.pending) && next.pending !== this.state.pending;
    const flipChanged = next.flipped !== this.state.flipped;
    this.state = next;
    if (`${this.fen}|${next.legalMoves.map((m) => m.text).join()}` !== choice)
      this.clearSelection();
    if (flipChanged) this.buildCells();
    this.render();
    const path = newPending ? movePath(next.pending) : next.lastMove;
    if (animate && (moving || newPending) && before.size && !samePieces(before, this.displayed))
      this.animate(before, this.displayed, path);
    // A move shown made (dropped by a drag, or pending) does not slide again when confirmed.
    if (newPending) this.droppedMove = next.pending;
    else if (moving && !next.pending) this.droppedMove = null;
  }

  /** The pieces as drawn: the position, with the pending move made on it. */
  shownPieces() {
    const { pieces, pending } = this.state;
    if (!pending) return pieces;
    const path = movePath(pending);
    const piece = pieces.get(path[0]);
    if (!piece) return pieces;
    const shown = new Map(pieces);
    shown.delete(path[0]);
    for (let i = 1; i < path.length; i++) {
      for (const square of between(path[i - 1], path[i])) {
        const taken = shown.get(square);
        if (taken && taken.color !== piece.color) shown.delete(square);
      }
    }
    shown.set(path[path.length - 1], piece);
    return shown;
  }

  /** Slide the piece along `path` to its square and fade the men that were taken. */
  animate(before, after, path) {
    if (path.length < 2 || window.matchMedia("(prefers-reduced-motion: reduce)").matches) return;
    const from = path[0];
    const to = path[path.length - 1];
    const moved = after.get(to);
    const dropped = this.droppedMove && movePath(this.droppedMove).join() === path.join();
    const target = this.cells.get(to);
    const piece = target && target.querySelector(".piece:not(.ghost)");
    if (piece && moved && !dropped && typeof piece.animate === "function") {
      const end = target.getBoundingClientRect();
      const frames = path.map((square) => {
        const box = this.cells.get(square).getBoundingClientRect();
        return { transform: `translate(${box.left - end.left}px, ${box.top - end.top}px)` };
      });
      frames[frames.length - 1] = { transform: "none" };
      piece.animate(frames, { duration: MOVE_ANIMATION_MS, easing: "ease-out" });
    }
    for (const [square, gone] of before) {
      if (square === from || after.has(square) || !this.cells.has(square)) continue;
      const ghost = h("span", {
        class: `piece ${gone.color}${gone.king ? " king" : ""} ghost`,
        "aria-hidden": "true",
      });
      this.cells.get(square).querySelector(".piece-slot").append(ghost);
      if (typeof ghost.animate !== "function") {
        ghost.remove();
        continue;
      }
      const fade = ghost.animate([{ opacity: 1 }, { opacity: 0 }], {
        duration: MOVE_ANIMATION_MS,
        easing: "ease-in",
        fill: "forwards",
      });
      fade.onfinish = () => ghost.remove();
    }
  }

  /** True when the legal moves on offer are captures (the player must take). */
  get captureRequired() {
    return this.state.legalMoves.some((m) => m.text.includes("x"));
  }

  /** Squares whose piece has a legal move. */
  get movableSquares() {
    return new Set(this.state.legalMoves.map((m) => m.path[0]));
  }

  buildCells() {
    const { flipped } = this.state;
    this.cells.clear();
    const children = [];
    for (let viewRow = 0; viewRow < 8; viewRow++) {
      for (let viewCol = 0; viewCol < 8; viewCol++) {
        const row = flipped ? 7 - viewRow : viewRow;
        const col = flipped ? 7 - viewCol : viewCol;
        const square = rowColToSquare(row, col);
        const coords = [];
        if (viewCol === 0) coords.push(h("span", { class: "coord rank", text: String(8 - row) }));
        if (viewRow === 7) coords.push(h("span", { class: "coord file", text: FILES[col] }));
        if (square === null) {
          children.push(h("div", { class: "cell light", "aria-hidden": "true" }, coords));
          continue;
        }
        const cell = h(
          "button",
          {
            type: "button",
            class: "cell dark",
            tabindex: "-1",
            dataset: { square: String(square) },
            onClick: () => this.onSquareClick(square),
            onFocus: () => {
              this.focusSquare = square;
            },
          },
          h("span", { class: "number", "aria-hidden": "true", text: String(square) }),
          h("span", { class: "coords", "aria-hidden": "true" }, coords),
          h("span", { class: "piece-slot" }),
        );
        this.cells.set(square, cell);
        children.push(cell);
      }
    }
    this.grid.replaceChildren(...children);
  }

  /** The arrow of `state.arrow` (a move's text), from square to square along its path. */
  drawArrow() {
    const path = this.state.arrow ? movePath(this.state.arrow) : [];
    this.arrowLayer.replaceChildren();
    this.element.dataset.arrow = this.state.arrow || "";
    if (path.length < 2) return;
    const flipped = this.state.flipped;
    const point = (square) => {
      const { row, col } = squareToRowCol(square);
      const x = (flipped ? 7 - col : col) + 0.5;
      const y = (flipped ? 7 - row : row) + 0.5;
      return `${x},${y}`;
    };
    const marker = document.createElementNS(SVG_NS, "marker");
    marker.setAttribute("id", `arrow-head-${this.arrowId}`);
    for (const [key, value] of Object.entries({
      viewBox: "0 0 4 4",
      refX: "2",
      refY: "2",
      markerWidth: "3",
      markerHeight: "3",
      orient: "auto",
    }))
      marker.setAttribute(key, value);
    const head = document.createElementNS(SVG_NS, "path");
    head.setAttribute("d", "M0,0 L4,2 L0,4 z");
    marker.append(head);
    const defs = document.createElementNS(SVG_NS, "defs");
    defs.append(marker);
    const line = document.createElementNS(SVG_NS, "polyline");
    line.setAttribute("points", path.map(point).join(" "));
    line.setAttribute("marker-end", `url(#arrow-head-${this.arrowId})`);
    this.arrowLayer.append(defs, line);
  }

  render() {
    this.drawArrow();
    const { lastMove, interactive, labels, premove, pending, premoving } = this.state;
    const pieces = this.shownPieces();
    this.displayed = pieces;
    this.element.dataset.labels = labels;
    this.element.classList.toggle("interactive", interactive);
    this.element.classList.toggle("premoving", Boolean(interactive && premoving));
    const movable = interactive ? this.movableSquares : new Set();
    const { next, finals } = this.targets();
    const lastSet = new Set(lastMove);
    const premoveSet = new Set(premove ? movePath(premove) : []);
    const pendingSet = new Set(pending ? movePath(pending) : []);
    // Keyboard focus enters the board on a piece that can move, unless the user is on it.
    const focusInside = this.grid.contains(document.activeElement);
    if (
      this.focusSquare === null ||
      !this.cells.has(this.focusSquare) ||
      (!focusInside && movable.size && !movable.has(this.focusSquare))
    ) {
      this.focusSquare = [...movable][0] ?? [...this.cells.keys()][0];
    }
    for (const [square, cell] of this.cells) {
      const piece = pieces.get(square);
      const slot = cell.querySelector(".piece-slot");
      // A piece that stays is left as it is, so that a redraw never cuts its slide short.
      const kind = piece ? `${piece.color}${piece.king ? " king" : ""}` : "";
      const current = slot.querySelector(":scope > .piece:not(.ghost)");
      if ((current ? current.dataset.kind : "") !== kind) {
        if (current) current.remove();
        if (piece)
          slot.prepend(
            h("span", { class: `piece ${kind}`, dataset: { kind }, "aria-hidden": "true" }),
          );
      }
      const isTarget = next.has(square) || finals.has(square);
      cell.classList.toggle("last", lastSet.has(square) && !pending);
      cell.classList.toggle("movable", movable.has(square));
      cell.classList.toggle("selected", this.selected === square);
      cell.classList.toggle("target", isTarget);
      cell.classList.toggle("visited", this.steps.includes(square));
      cell.classList.toggle("premove", premoveSet.has(square));
      cell.classList.toggle("pending", pendingSet.has(square));
      cell.tabIndex = square === this.focusSquare ? 0 : -1;
      const flags = { movable, isTarget, lastSet, premoveSet, pendingSet };
      cell.setAttribute("aria-label", this.describe(square, piece, flags));
      cell.dataset.piece = piece ? `${piece.color}${piece.king ? "-king" : "-man"}` : "";
    }
  }

  describe(square, piece, { movable, isTarget, lastSet, premoveSet, pendingSet }) {
    const parts = [`square ${square}`];
    parts.push(piece ? `${piece.color} ${piece.king ? "king" : "man"}` : "empty");
    if (this.selected === square) parts.push("selected");
    else if (movable.has(square)) parts.push(this.state.premoving ? "can premove" : "can move");
    if (isTarget) parts.push(this.state.premoving ? "premove here" : "move here");
    if (pendingSet.has(square)) parts.push("move being sent");
    else if (lastSet.has(square)) parts.push("last move");
    if (premoveSet.has(square)) parts.push("premove");
    return parts.join(", ");
  }

  /** Moves still possible for the selected piece, given the landing squares clicked so far. */
  candidates() {
    if (this.selected === null) return [];
    const depth = this.steps.length;
    return this.state.legalMoves.filter(
      (m) =>
        m.path[0] === this.selected &&
        m.path.length > depth + 1 &&
        this.steps.every((s, i) => m.path[i + 1] === s),
    );
  }

  /** Next landing squares, and final squares reachable by exactly one path. */
  targets() {
    const next = new Set();
    const finals = new Set();
    const counts = new Map();
    const candidates = this.candidates();
    for (const m of candidates) {
      next.add(m.path[this.steps.length + 1]);
      const last = m.path[m.path.length - 1];
      counts.set(last, (counts.get(last) || 0) + 1);
    }
    for (const [square, count] of counts) if (count === 1) finals.add(square);
    return { next, finals };
  }

  clearSelection() {
    this.selected = null;
    this.steps = [];
  }

  select(square) {
    this.selected = square;
    this.steps = [];
    this.render();
  }

  onSquareClick(square) {
    if (this.suppressClick) {
      this.suppressClick = false;
      return;
    }
    if (this.onSquare && this.onSquare(square)) return;
    this.choose(square);
  }

  /** The click-click logic: pick a piece, then each landing square or the unambiguous final one. */
  choose(square) {
    const { interactive, pieces, turn } = this.state;
    if (!interactive) return;
    const movable = this.movableSquares;
    if (this.steps.length === 0 && movable.has(square) && square !== this.selected) {
      this.select(square);
      return;
    }
    if (this.selected !== null) {
      const candidates = this.candidates();
      const depth = this.steps.length;
      const viaStep = candidates.filter((m) => m.path[depth + 1] === square);
      if (viaStep.length > 0) {
        const complete = viaStep.filter((m) => m.path.length === depth + 2);
        if (complete.length === 1 && viaStep.length === 1) {
          this.play(complete[0]);
          return;
        }
        this.steps.push(square);
        this.render();
        return;
      }
      const ending = candidates.filter((m) => m.path[m.path.length - 1] === square);
      if (ending.length === 1) {
        this.play(ending[0]);
        return;
      }
      if (ending.length > 1) {
        this.onNotice("Several capture paths end there: click each landing square in turn.");
        return;
      }
      if (square === this.selected || this.steps.length > 0) {
        this.clearSelection();
        this.render();
        return;
      }
    }
    const piece = pieces.get(square);
    if (piece && piece.color === turn && !movable.has(square)) {
      this.onNotice(
        this.captureRequired
          ? `${CAPTURE_NOTICE}: only a piece that can capture may move.`
          : "That piece has no legal move.",
      );
    }
    this.clearSelection();
    this.render();
  }

  play(move) {
    this.clearSelection();
    if (this.state.premoving) {
      this.render();
      this.onPremove(move.text);
      return;
    }
    if (this.dropping) this.droppedMove = move.text;
    this.state.legalMoves = [];
    this.render();
    this.onMove(move.text);
  }

  onKeyDown(event) {
    const deltas = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (event.key === "Escape") {
      // Escape drops the piece picked, or else the premove waiting.
      if (this.selected === null && this.state.premove) this.onPremove(null);
      this.clearSelection();
      this.render();
      return;
    }
    const delta = deltas[event.key];
    if (!delta || this.focusSquare === null) return;
    event.preventDefault();
    const sign = this.state.flipped ? -1 : 1;
    const { row, col } = squareToRowCol(this.focusSquare);
    const target = neighbour(row, col, delta[0] * sign, delta[1] * sign);
    if (target !== null) {
      this.focusSquare = target;
      this.render();
      this.cells.get(target).focus();
    }
  }

  onPointerDown(event) {
    if (event.button !== 0 || !this.state.interactive) return;
    const cell = event.target.closest(".cell.dark");
    if (!cell) return;
    const square = Number(cell.dataset.square);
    if (!this.movableSquares.has(square)) return;
    const piece = cell.querySelector(".piece");
    if (!piece) return;
    event.preventDefault();
    this.drag = { square, piece, x: event.clientX, y: event.clientY, moved: false };
    const move = (e) => this.onPointerMove(e);
    const up = (e) => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      window.removeEventListener("pointercancel", up);
      this.onPointerUp(e);
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
    window.addEventListener("pointercancel", up);
  }

  onPointerMove(event) {
    const drag = this.drag;
    if (!drag) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < DRAG_THRESHOLD_PX) return;
    if (!drag.moved) {
      drag.moved = true;
      if (this.selected !== drag.square || this.steps.length > 0) this.select(drag.square);
      drag.piece = this.cells.get(drag.square).querySelector(".piece");
      drag.piece.classList.add("dragging");
    }
    drag.piece.style.transform = `translate(${dx}px, ${dy}px)`;
  }

  onPointerUp(event) {
    const drag = this.drag;
    this.drag = null;
    if (!drag || !drag.moved) return;
    drag.piece.classList.remove("dragging");
    drag.piece.style.transform = "";
    const under = document.elementFromPoint(event.clientX, event.clientY);
    const cell = under && under.closest(".board-grid .cell.dark");
    // The click that follows a drag would land on the drop square: the drop handles it.
    this.suppressClick = Boolean(cell && cell.dataset.square === String(drag.square));
    if (cell && this.grid.contains(cell) && cell.dataset.square !== String(drag.square)) {
      this.dropping = true;
      try {
        this.choose(Number(cell.dataset.square));
      } finally {
        this.dropping = false;
      }
    }
  }
}

/** Two maps of pieces hold the same pieces on the same squares. */
function samePieces(a, b) {
  if (a.size !== b.size) return false;
  for (const [square, piece] of a) {
    const other = b.get(square);
    if (!other || other.color !== piece.color || other.king !== piece.king) return false;
  }
  return true;
}

/** The squares strictly between two squares of one diagonal (none if they are not on one). */
export function between(from, to) {
  const a = squareToRowCol(from);
  const b = squareToRowCol(to);
  const dr = Math.sign(b.row - a.row);
  const dc = Math.sign(b.col - a.col);
  if (Math.abs(b.row - a.row) !== Math.abs(b.col - a.col) || !dr) return [];
  const squares = [];
  for (let r = a.row + dr, c = a.col + dc; r !== b.row; r += dr, c += dc)
    squares.push(rowColToSquare(r, c));
  return squares;
}

/** The dark square next to (row, col) in a direction: along the row, or diagonally up/down. */
function neighbour(row, col, dRow, dCol) {
  if (dCol !== 0) {
    const c = col + 2 * dCol;
    return c >= 0 && c <= 7 ? rowColToSquare(row, c) : null;
  }
  const r = row + dRow;
  if (r < 0 || r > 7) return null;
  for (const c of [col - 1, col + 1]) {
    if (c >= 0 && c <= 7) return rowColToSquare(r, c);
  }
  return null;
}

/**
 * The board-labels switch shown with a board: square numbers (the default) or chess coordinates;
 * the choice is remembered (prefs.labels) for every board, the replay's included.
 */
export function labelsSwitch(board) {
  const box = h("input", {
    type: "checkbox",
    name: "coordinates",
    checked: prefs.labels === "coordinates",
    onChange: () => {
      prefs.labels = box.checked ? "coordinates" : "numbers";
      board.set({ labels: prefs.labels });
    },
  });
  return h("label", { class: "inline labels-switch" }, box, "Chess coordinates");
}

/** The board's and the pieces' colours, chosen for every board and remembered (prefs). */
export function themeSwitches() {
  const pick = (label, name, themes, key) => {
    const select = h(
      "select",
      { name, "aria-label": `${label} theme`, onChange: () => (prefs[key] = select.value) },
      Object.entries(themes).map(([value, text]) =>
        h("option", { value, text, selected: prefs[key] === value }),
      ),
    );
    return h("label", { class: "inline" }, label, select);
  };
  return [
    pick("Board", "board-theme", BOARD_THEMES, "board"),
    pick("Pieces", "piece-theme", PIECE_THEMES, "pieces"),
  ];
}

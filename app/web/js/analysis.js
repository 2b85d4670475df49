// The computer analysis of a finished game, on its replay page (docs/analysis.md): "Request
// analysis" (signed in), its progress while queued and running (read again every second), then
// the evaluation graph (SVG: Black's winning chances, +1 at the top, a click jumps to that
// move), each side's accuracy and its count of inaccuracies, mistakes and blunders, and, for
// the move on the board, its evaluation, its label and the best move instead (drawn as an arrow
// by the replay, with its line).

import { api, query } from "./api.js";
import { h, mount } from "./dom.js";
import { MARK_SYMBOLS } from "./movelist.js";
import { session } from "./session.js";

const POLL_MS = 1000;
const K = 0.00675; // the chances' slope per centipiece (app/analysis/chances.py)
const SVG_NS = "http://www.w3.org/2000/svg";
const WIDTH = 300;
const HEIGHT = 90;

/** Black's winning chances (-1 to +1) of an evaluation as served. */
export function chancesOf(evaluation) {
  if (!evaluation) return 0;
  if (evaluation.win_in !== null && evaluation.win_in !== undefined)
    return evaluation.black_wins ? 1 : -1;
  return 2 / (1 + Math.exp(-K * evaluation.cp)) - 1;
}

function svg(tag, attrs = {}) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
}

/**
 * The panel. `onChange()` is called when the analysis arrives (the replay draws its marks and
 * arrow again); `onPick(ply)` when the graph is clicked.
 */
export function analysisPanel({ gameId, invite, status, onChange, onPick }) {
  let analysis = null; // as served, once asked for
  let error = "";
  let timer = null;
  let stopped = false;
  let ply = 0;
  const box = h("div", { class: "analysis" });
  const element = h(
    "section",
    { class: "panel", "aria-labelledby": `analysis-title-${gameId}` },
    h("h2", { id: `analysis-title-${gameId}`, text: "Computer analysis" }),
    box,
  );

  async function read() {
    try {
      analysis = await api.get(`/api/games/${gameId}/analysis${query({ invite })}`);
      error = "";
    } catch (err) {
      if (err.status !== 404) error = err.message;
      analysis = null;
    }
    settle();
  }

  function settle() {
    clearTimeout(timer);
    if (!stopped && analysis && ["queued", "running"].includes(analysis.status))
      timer = setTimeout(read, POLL_MS);
    draw();
    onChange();
  }

  async function ask() {
    error = "";
    try {
      analysis = await api.post(`/api/games/${gameId}/analysis${query({ invite })}`);
    } catch (err) {
      error = err.message;
    }
    settle();
  }

  function counts(colour) {
    const mine = (analysis.plies || []).filter((p) => moverOf(p.ply) === colour);
    const of = (label) => mine.filter((p) => p.label === label).length;
    return `${of("inaccuracy")} inaccuracies, ${of("mistake")} mistakes, ${of("blunder")} blunders`;
  }

  let moverOf = () => "black";

  function graph() {
    const plies = analysis.plies || [];
    const values = [chancesOf(analysis.start), ...plies.map((p) => chancesOf(p.eval))];
    const x = (i) => (values.length > 1 ? (i / (values.length - 1)) * WIDTH : 0);
    const y = (v) => ((1 - v) / 2) * HEIGHT;
    const chart = svg("svg", {
      class: "eval-graph",
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: "img",
      "aria-label": "Evaluation graph: Black's winning chances move by move, Black ahead above",
    });
    const area = values.map((v, i) => `${x(i)},${y(v)}`).join(" ");
    chart.append(
      svg("rect", { class: "eval-white", x: 0, y: 0, width: WIDTH, height: HEIGHT }),
      svg("polygon", { class: "eval-black", points: `0,${HEIGHT} ${area} ${WIDTH},${HEIGHT}` }),
      svg("line", { class: "eval-zero", x1: 0, y1: HEIGHT / 2, x2: WIDTH, y2: HEIGHT / 2 }),
    );
    plies.forEach((p) => {
      if (p.label === "mistake" || p.label === "blunder")
        chart.append(
          svg("circle", { class: `eval-mark ${p.label}`, cx: x(p.ply), cy: y(values[p.ply]), r: 3 }),
        );
    });
    chart.append(svg("line", { class: "eval-now", x1: x(ply), y1: 0, x2: x(ply), y2: HEIGHT }));
    chart.addEventListener("click", (event) => {
      const rect = chart.getBoundingClientRect();
      const at = Math.round(((event.clientX - rect.left) / rect.width) * (values.length - 1));
      onPick(Math.max(0, Math.min(values.length - 1, at)));
    });
    return chart;
  }

  function here() {
    if (!analysis || analysis.status !== "done") return null;
    const entry = ply > 0 ? analysis.plies[ply - 1] : null;
    const next = analysis.plies[ply]; // the move played from here, with the best instead
    const parts = [];
    if (entry)
      parts.push(
        h("span", {
          class: "eval-text",
          text: `After ${entry.move}: ${entry.eval.text}`,
        }),
        entry.label
          ? h("span", {
              class: `move-mark ${entry.label}`,
              text: ` ${MARK_SYMBOLS[entry.label]} ${entry.label}`,
            })
          : null,
        entry.label && entry.best
          ? h("span", { class: "muted", text: ` (best was ${entry.best})` })
          : null,
      );
    else parts.push(h("span", { class: "eval-text", text: `Start: ${analysis.start.text}` }));
    if (next && next.best)
      parts.push(
        h("br"),
        h("span", {
          class: "muted best-line",
          text: `Best here: ${next.best}${next.pv.length > 1 ? ` (${next.pv.join(" ")})` : ""}`,
        }),
      );
    return h("p", { class: "analysis-here" }, ...parts);
  }

  function draw() {
    const parts = [];
    if (!analysis || analysis.status === "failed") {
      if (analysis && analysis.error)
        parts.push(h("p", { class: "error-text", text: `The analysis failed: ${analysis.error}` }));
      if (status === "playing") parts.push(h("p", { class: "muted", text: "Once the game is over." }));
      else if (session.user)
        parts.push(
          h("button", { type: "button", class: "primary", onClick: ask, text: "Request analysis" }),
        );
      else parts.push(h("p", { class: "muted", text: "Sign in to request an analysis." }));
    } else if (analysis.status !== "done") {
      const { done, total } = analysis.progress;
      const waiting =
        analysis.status === "queued"
          ? `Waiting for the analysis${analysis.ahead ? ` (${analysis.ahead} ahead)` : ""}…`
          : `Analysing… ${done} of ${total} positions`;
      parts.push(
        h("p", { role: "status", text: waiting }),
        h("progress", { max: String(total), value: String(done), "aria-label": "Analysis progress" }),
      );
    } else {
      const accuracy = analysis.accuracy || {};
      parts.push(
        graph(),
        h(
          "ul",
          { class: "analysis-summary" },
          h("li", { text: `Black: accuracy ${accuracy.black ?? "–"} · ${counts("black")}` }),
          h("li", { text: `White: accuracy ${accuracy.white ?? "–"} · ${counts("white")}` }),
        ),
        here(),
      );
    }
    if (error) parts.push(h("p", { class: "error-text", role: "alert", text: error }));
    mount(box, ...parts);
  }

  return {
    element,
    start(mover) {
      moverOf = mover;
      read();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
    /** The move on the board changed: the graph's marker and the words follow. */
    at(current) {
      ply = current;
      if (analysis && analysis.status === "done") draw();
    },
    /** Each ply's label (for the move list), once done. */
    marks() {
      return analysis && analysis.status === "done" ? analysis.plies.map((p) => p.label) : null;
    },
    /** The best move in the position on the board (the replay draws it as an arrow). */
    bestAt(current) {
      if (!analysis || analysis.status !== "done") return null;
      const next = analysis.plies[current];
      return next ? next.best : null;
    },
  };
}

// Ratings as players see them: "1523" beside a name ("1500?" while provisional), a change
// ("+12" / "−8"), the names of the time-control categories, and the rating-history chart.

import { h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";

export const CATEGORIES = ["bullet", "blitz", "rapid", "classical", "untimed"];

export function categoryName(category) {
  return (
    {
      bullet: "Bullet",
      blitz: "Blitz",
      rapid: "Rapid",
      classical: "Classical",
      untimed: "Untimed",
    }[category] || category
  );
}

/** "1523", "1500?" while provisional; "" without a rating (a guest). */
export function ratingText(rated) {
  if (!rated || rated.rating === null || rated.rating === undefined) return "";
  return `${rated.rating}${rated.provisional ? "?" : ""}`;
}

/** A rating change as shown: "+12", "−8" (a true minus sign), "±0". */
export function diffText(diff) {
  if (diff > 0) return `+${diff}`;
  if (diff < 0) return `−${Math.abs(diff)}`;
  return "±0";
}

/** The rating beside a name, as a small badge; null without a rating. */
export function ratingBadge(rated) {
  const text = ratingText(rated);
  if (!text) return null;
  return h("span", {
    class: "rating",
    title: rated.provisional ? "Provisional rating: too few recent rated games" : "Rating",
    dataset: { provisional: rated.provisional ? "true" : "false" },
    text: ` (${text})`,
  });
}

/** A rating change as a coloured badge (`data-sign` says which way it went). */
export function diffBadge(diff) {
  if (diff === null || diff === undefined) return null;
  return h("span", {
    class: "rating-diff",
    dataset: { sign: diff > 0 ? "up" : diff < 0 ? "down" : "even" },
    text: diffText(diff),
  });
}

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children) if (child) el.append(child);
  return el;
}

function dayNumber(day) {
  return Date.UTC(...day.split("-").map((n, i) => Number(n) - (i === 1 ? 1 : 0))) / 86400000;
}

/**
 * A line chart of one rating's history, drawn as inline SVG: `points` are `{date, rating}`,
 * oldest first, one per day (the day's last rating). Dates are spaced by time, the rating axis
 * fits the range shown, with gridlines and labels every "nice" step.
 */
export function ratingChart(points, label) {
  const width = 640;
  const height = 220;
  const pad = { left: 44, right: 12, top: 12, bottom: 28 };
  const days = points.map((p) => dayNumber(p.date));
  const ratings = points.map((p) => p.rating);
  const low = Math.min(...ratings);
  const high = Math.max(...ratings);
  const step = niceStep(Math.max(high - low, 50) / 4);
  const bottom = Math.floor((low - step / 2) / step) * step;
  const top = Math.ceil((high + step / 2) / step) * step;
  const first = days[0];
  const span = Math.max(days[days.length - 1] - first, 1);
  const x = (day) =>
    points.length === 1
      ? pad.left + (width - pad.left - pad.right) / 2
      : pad.left + ((day - first) / span) * (width - pad.left - pad.right);
  const y = (rating) =>
    pad.top + (1 - (rating - bottom) / (top - bottom)) * (height - pad.top - pad.bottom);
  const grid = [];
  for (let value = bottom; value <= top; value += step) {
    grid.push(
      svg("line", {
        class: "grid",
        x1: pad.left,
        x2: width - pad.right,
        y1: y(value),
        y2: y(value),
      }),
      svg("text", { class: "axis", x: pad.left - 6, y: y(value) + 4, "text-anchor": "end" }),
    );
    grid[grid.length - 1].textContent = String(value);
  }
  const dateLabel = (index, anchor) => {
    const text = svg("text", {
      class: "axis",
      x: x(days[index]),
      y: height - 8,
      "text-anchor": anchor,
    });
    text.textContent = points[index].date;
    return text;
  };
  const path = points
    .map((p, i) => `${i ? "L" : "M"}${x(days[i]).toFixed(1)},${y(p.rating).toFixed(1)}`)
    .join(" ");
  const dots = points.map((p, i) => {
    const dot = svg("circle", { class: "dot", cx: x(days[i]), cy: y(p.rating), r: 3 });
    dot.append(svg("title"));
    dot.firstChild.textContent = `${p.date}: ${p.rating}`;
    return dot;
  });
  const last = points[points.length - 1];
  return svg(
    "svg",
    {
      class: "rating-chart",
      viewBox: `0 0 ${width} ${height}`,
      role: "img",
      "aria-label": `${label}: from ${points[0].rating} on ${points[0].date} to ${last.rating} on ${last.date}, ${points.length} days played`,
      preserveAspectRatio: "xMidYMid meet",
    },
    ...grid,
    dateLabel(0, points.length === 1 ? "middle" : "start"),
    points.length > 1 ? dateLabel(points.length - 1, "end") : null,
    svg("path", { class: "line", d: path }),
    ...dots,
  );
}

function niceStep(raw) {
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const factor of [1, 2, 2.5, 5, 10]) {
    if (raw <= factor * power) return factor * power;
  }
  return 10 * power;
}

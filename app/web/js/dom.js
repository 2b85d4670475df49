// Small DOM helpers: build elements declaratively without a framework.

/**
 * Create an element. `props` keys: `class`, `text`, `on<Event>` handlers, `dataset`, `aria-*`
 * and any other attribute; `false`/`null`/`undefined` values are skipped.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === false || value === null || value === undefined) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key in el && !key.includes("-") && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

let pageTitle = "";
let titleFlag = "";

/** Name the page in the window title, as screen readers announce it on navigation. */
export function setTitle(text) {
  pageTitle = text;
  const title = text ? `${text} · Checkers` : "Checkers";
  document.title = titleFlag ? `${titleFlag} · ${title}` : title;
}

/** Put `flag` ("Your move!") in front of the window title, on any page; "" removes it. */
export function flagTitle(flag) {
  titleFlag = flag;
  setTitle(pageTitle);
}

/** The flag in front of the window title now ("" without one). */
export function titleFlagText() {
  return titleFlag;
}

/** Replace all children of `el`. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * Like `mount`, but what would be drawn the same is kept: the elements already there stay, so a
 * click, the keyboard focus or a hover on them is not lost to a redraw. For children whose
 * handlers read the page's state when they run (not what it was when they were made).
 */
export function redraw(el, ...children) {
  const next = document.createElement(el.tagName);
  append(next, children);
  if (next.innerHTML !== el.innerHTML) el.replaceChildren(...next.childNodes);
  return el;
}

/** Show a short message in the polite live region at the bottom of the page. */
export function toast(message, kind = "info") {
  const box = document.getElementById("toast");
  if (!box) return;
  box.textContent = message;
  box.dataset.kind = kind;
  box.classList.add("shown");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => box.classList.remove("shown"), 5000);
}

/** Format a date (ISO text) for lists, in the viewer's locale. */
export function formatDate(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString();
}

/** Format milliseconds as m:ss, or h:mm:ss past an hour, or "2d 23h" past a day (a
 * correspondence clock); tenths under ten seconds. */
export function formatClock(ms) {
  if (ms === null || ms === undefined) return "–";
  const clamped = Math.max(0, ms);
  const total = Math.floor(clamped / 1000);
  if (total >= 86400) return `${Math.floor(total / 86400)}d ${Math.floor((total % 86400) / 3600)}h`;
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const ss = String(seconds).padStart(2, "0");
  if (hours > 0) return `${hours}:${String(minutes).padStart(2, "0")}:${ss}`;
  if (clamped < 10000) return `${minutes}:${ss}.${Math.floor((clamped % 1000) / 100)}`;
  return `${minutes}:${ss}`;
}

/** Format a clock setting: "5+3" minutes + increment seconds, "3 days per move" (a base of
 * a day or more: correspondence), or "untimed". */
export function formatTimeControl(baseSeconds, incrementSeconds) {
  if (baseSeconds === null || baseSeconds === undefined) return "untimed";
  if (baseSeconds >= 86400) {
    const days = Math.floor(baseSeconds / 86400);
    return days === 1 ? "1 day per move" : `${days} days per move`;
  }
  const base = baseSeconds % 60 === 0 ? String(baseSeconds / 60) : (baseSeconds / 60).toFixed(1);
  return `${base}+${incrementSeconds || 0}`;
}

// The cost-against-time scatter plot, drawn as inline SVG: one point per quote, whiskers for each
// quote's low–high range, the Pareto frontier joined by a line, rings on the cheapest, fastest and
// recommended quotes, and a tooltip with the offer on hover or keyboard focus.

import { translate } from "./i18n.js";
import { age, hours, money, pricingName, timestamp } from "./format.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const WIDTH = 720;
const HEIGHT = 380;
const MARGIN = { top: 24, right: 28, bottom: 52, left: 88 };
const MARKS = ["cheapest", "fastest", "recommended"];

/** Ids of the quotes no other quote beats on both expected time and expected cost. */
function paretoFrontier(points) {
  const onFrontier = new Set();
  for (const p of points) {
    const dominated = points.some(
      (q) => q !== p && q.x <= p.x && q.y <= p.y && (q.x < p.x || q.y < p.y),
    );
    if (!dominated) onFrontier.add(p.id);
  }
  return onFrontier;
}

/** Round tick values from 0 to at least `max`: steps of 1, 2, 2.5 or 5 times a power of ten. */
function niceTicks(max, count = 5) {
  const safeMax = max > 0 ? max : 1;
  const rough = safeMax / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough);
  const ticks = [];
  for (let value = 0; value < safeMax + step * 0.999; value += step) {
    ticks.push(Number(value.toPrecision(12)));
  }
  return ticks;
}

function svg(name, attributes = {}, parent = null) {
  const element = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  if (parent) parent.appendChild(element);
  return element;
}

function drawAxes(root, xScale, yScale, xTicks, yTicks, lang) {
  const axes = svg("g", { class: "axes" }, root);
  const bottom = HEIGHT - MARGIN.bottom;
  for (const tick of xTicks) {
    const x = xScale(tick);
    svg("line", { class: "grid", x1: x, x2: x, y1: MARGIN.top, y2: bottom }, axes);
    const label = svg("text", { class: "tick", x, y: bottom + 18, "text-anchor": "middle" }, axes);
    label.textContent = hours(lang, tick);
  }
  for (const tick of yTicks) {
    const y = yScale(tick);
    svg("line", { class: "grid", x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y, y2: y }, axes);
    const label = svg("text", { class: "tick", x: MARGIN.left - 8, y: y + 4, "text-anchor": "end" }, axes);
    label.textContent = money(lang, tick).replace(/\.00$/, "");
  }
  svg("line", { class: "axis", x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: bottom, y2: bottom }, axes);
  svg("line", { class: "axis", x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: bottom }, axes);
  const xTitle = svg("text", { class: "axis-title", x: (MARGIN.left + WIDTH - MARGIN.right) / 2,
    y: HEIGHT - 10, "text-anchor": "middle" }, axes);
  xTitle.textContent = translate(lang, "axis_hours");
  const yMid = (MARGIN.top + bottom) / 2;
  const yTitle = svg("text", { class: "axis-title", x: 16, y: yMid, "text-anchor": "middle",
    transform: `rotate(-90 16 ${yMid})` }, axes);
  yTitle.textContent = translate(lang, "axis_cost");
}

function marksOf(quote, marks) {
  return MARKS.filter((mark) => marks[mark] === quote.id);
}

function tooltipLines(quote, lang, gpuName) {
  const offer = `${quote.offer_id} (${quote.city}, ${quote.region})`;
  const setup = `${gpuName(quote.gpu)} × ${quote.cards} · ${pricingName(lang, quote.pricing)}`;
  const stale = quote.stale ? ` (${translate(lang, "stale")})` : "";
  return [
    [translate(lang, "tip_offer"), offer],
    ["", setup],
    [translate(lang, "tip_hours"), `${hours(lang, quote.hours.expected)} h (${hours(lang, quote.hours.low)} – ${hours(lang, quote.hours.high)})`],
    [translate(lang, "tip_cost"), `${money(lang, quote.cost_cny.expected)} (${money(lang, quote.cost_cny.low)} – ${money(lang, quote.cost_cny.high)})`],
    [translate(lang, "tip_fetched"), `${age(lang, quote.price_fetched_at)} · ${timestamp(lang, quote.price_fetched_at)}${stale}`],
  ];
}

function showTooltip(tooltip, point, lines, quoteId) {
  tooltip.replaceChildren();
  for (const [name, value] of lines) {
    const line = document.createElement("div");
    if (name) {
      const label = document.createElement("span");
      label.className = "tip-label";
      label.textContent = `${name}: `;
      line.appendChild(label);
    }
    line.appendChild(document.createTextNode(value));
    tooltip.appendChild(line);
  }
  tooltip.dataset.quoteId = quoteId;
  tooltip.hidden = false;
  const box = tooltip.parentElement.getBoundingClientRect();
  const dot = point.getBoundingClientRect();
  const left = Math.min(dot.right - box.left + 8, box.width - tooltip.offsetWidth - 4);
  tooltip.style.left = `${Math.max(4, left)}px`;
  tooltip.style.top = `${Math.max(4, dot.top - box.top - tooltip.offsetHeight - 6)}px`;
}

function drawMarks(root, quote, cx, cy, marks, lang) {
  const names = marksOf(quote, marks);
  names.forEach((mark, index) => {
    svg("circle", { class: `mark marker-${mark}`, cx, cy, r: 10 + index * 4 }, root);
  });
  if (names.length) {
    // Labels go on the side with room: points on the right half are labelled to their left.
    const offset = 12 + names.length * 4;
    const leftward = cx > WIDTH / 2;
    const label = svg("text", { class: "mark-label", x: leftward ? cx - offset : cx + offset, y: cy - 8,
      "text-anchor": leftward ? "end" : "start" }, root);
    label.textContent = names.map((mark) => translate(lang, mark)).join(" · ");
  }
}

/**
 * Draws `quotes` into `container`. `marks` holds the response's cheapest / fastest / recommended ids;
 * `onFocus(id | null)` is told which quote the pointer or keyboard is on; `gpuName(id)` names a GPU.
 */
export function renderPlot(container, tooltip, quotes, marks, { lang, onFocus = () => {}, gpuName = (id) => id }) {
  container.replaceChildren();
  tooltip.hidden = true;
  const root = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", class: "scatter" }, container);
  svg("title", {}, root).textContent = translate(lang, "plot_caption");
  if (!quotes.length) return root;

  const xTicks = niceTicks(Math.max(...quotes.map((q) => q.hours.high)));
  const yTicks = niceTicks(Math.max(...quotes.map((q) => q.cost_cny.high)));
  const xMax = xTicks[xTicks.length - 1];
  const yMax = yTicks[yTicks.length - 1];
  const xScale = (value) => MARGIN.left + (value / xMax) * (WIDTH - MARGIN.left - MARGIN.right);
  const yScale = (value) => HEIGHT - MARGIN.bottom - (value / yMax) * (HEIGHT - MARGIN.top - MARGIN.bottom);
  drawAxes(root, xScale, yScale, xTicks, yTicks, lang);

  const points = quotes.map((q) => ({ id: q.id, x: q.hours.expected, y: q.cost_cny.expected }));
  const frontier = paretoFrontier(points);
  const frontierPath = points
    .filter((p) => frontier.has(p.id))
    .sort((a, b) => a.x - b.x || b.y - a.y)
    .map((p) => `${xScale(p.x).toFixed(1)},${yScale(p.y).toFixed(1)}`);
  svg("polyline", { class: "frontier", points: frontierPath.join(" ") }, root);

  const ranges = svg("g", { class: "ranges" }, root);
  const layer = svg("g", { class: "points" }, root);
  for (const quote of quotes) {
    const cx = xScale(quote.hours.expected);
    const cy = yScale(quote.cost_cny.expected);
    svg("line", { class: "range", x1: xScale(quote.hours.low), x2: xScale(quote.hours.high), y1: cy, y2: cy }, ranges);
    svg("line", { class: "range", x1: cx, x2: cx, y1: yScale(quote.cost_cny.low), y2: yScale(quote.cost_cny.high) }, ranges);
    drawMarks(layer, quote, cx, cy, marks, lang);
    const classes = ["point", frontier.has(quote.id) ? "on-frontier" : "", quote.stale ? "stale" : ""];
    const point = svg("circle", {
      class: classes.filter(Boolean).join(" "), cx, cy, r: 6, tabindex: 0,
      "data-quote-id": quote.id, "data-marks": marksOf(quote, marks).join(" "),
    }, layer);
    // A label, not a <title>: the browser's own tooltip would double the one drawn here.
    const lines = tooltipLines(quote, lang, gpuName);
    point.setAttribute("aria-label", lines.map(([n, v]) => (n ? `${n}: ${v}` : v)).join("; "));
    const enter = () => { showTooltip(tooltip, point, lines, quote.id); onFocus(quote.id); };
    const leave = () => { tooltip.hidden = true; onFocus(null); };
    point.addEventListener("mouseenter", enter);
    point.addEventListener("focus", enter);
    point.addEventListener("mouseleave", leave);
    point.addEventListener("blur", leave);
  }
  return root;
}

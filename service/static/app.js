// The quote explorer: reads the form into a QuoteRequest, POSTs /quote, and shows the ranked quotes as
// a table and a scatter plot. The API is the only validator: what it rejects is shown next to the
// field it names, so the page never disagrees with what a chatbot or script would be told.

import { applyLanguage, initialLanguage, translate } from "./i18n.js";
import { age, hours, money, pricingName, timestamp } from "./format.js";
import { renderPlot } from "./plot.js";

const MARKS = ["cheapest", "fastest", "recommended"];
const EXCLUDED_REASONS = ["memory", "deadline", "budget", "stale", "capacity", "filters"];

const form = document.getElementById("quote-form");
const state = { lang: "en", gpuNames: new Map(), vendorNames: new Map(), response: null };

/** A number when the text is one; otherwise the text itself, so the API names the field. */
function numberOrText(text) {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : trimmed;
}

function selectedValues(select) {
  return [...select.selectedOptions].map((option) => option.value);
}

/** The QuoteRequest the form describes; empty fields are left out so the API's defaults apply. */
function buildRequest(elements) {
  const text = (name) => elements[name].value;
  const cardCounts = text("card_counts").split(/[\s,，、]+/).filter(Boolean).map(numberOrText);
  const gpus = selectedValues(elements.gpus);
  const vendors = selectedValues(elements.vendors);
  return {
    workload: {
      gpu_hours: numberOrText(text("gpu_hours")),
      reference_gpu: text("reference_gpu") || undefined,
      model_params_b: numberOrText(text("model_params_b")),
      task: text("task") || undefined,
    },
    gpus: gpus.length ? gpus : undefined,
    vendors: vendors.length ? vendors : undefined,
    card_counts: cardCounts.length ? cardCounts : undefined,
    deadline_hours: numberOrText(text("deadline_hours")),
    budget_cny: numberOrText(text("budget_cny")),
    rank_by: text("rank_by"),
    time_value_cny_per_hour: numberOrText(text("time_value_cny_per_hour")),
    lang: text("lang"),
  };
}

function element(tag, className = "", text = "") {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.textContent = text;
  return node;
}

// ---- errors -------------------------------------------------------------------------------------

function clearErrors() {
  for (const field of form.querySelectorAll(".field.invalid")) field.classList.remove("invalid");
  for (const message of form.querySelectorAll(".field-error")) message.textContent = "";
  for (const control of form.querySelectorAll("[aria-invalid]")) control.removeAttribute("aria-invalid");
  document.getElementById("form-error").textContent = "";
}

/** The form field an API error path names: exact, then by its last name, then by its parent. */
function fieldFor(path) {
  const fields = [...form.querySelectorAll(".field[data-field]")];
  const exact = fields.find((field) => field.dataset.field === path);
  if (exact) return exact;
  const last = path.split(".").pop();
  const byName = fields.find((field) => field.dataset.field.split(".").pop() === last);
  if (byName) return byName;
  return path.includes(".") ? fieldFor(path.slice(0, path.lastIndexOf("."))) : null;
}

function errorPath(item) {
  let path = String(item.field ?? "body").replace(/\[\d+\]/g, "").replace(/^body\.?/, "");
  // msgspec reports a missing field at its parent: "Object missing required field `gpu_hours`".
  const missing = /missing required field `(\w+)`/.exec(item.reason ?? "");
  if (missing) path = path ? `${path}.${missing[1]}` : missing[1];
  return path;
}

function showProblem(problem) {
  const unplaced = [];
  for (const item of problem.errors ?? []) {
    const field = fieldFor(errorPath(item));
    if (!field) {
      unplaced.push(item.field ? `${item.field}: ${item.reason}` : item.reason);
      continue;
    }
    field.classList.add("invalid");
    const message = field.querySelector(".field-error");
    message.textContent = message.textContent ? `${message.textContent}; ${item.reason}` : item.reason;
    field.querySelector("input, select")?.setAttribute("aria-invalid", "true");
  }
  if (!problem.errors?.length) unplaced.push(problem.detail || problem.title || String(problem.status));
  document.getElementById("form-error").textContent = unplaced.join(" · ");
  form.querySelector(".field.invalid input, .field.invalid select")?.focus();
}

// ---- results ------------------------------------------------------------------------------------

function marksOf(response, quote) {
  return MARKS.filter((mark) => response[mark] === quote.id);
}

function highlight(quoteId) {
  for (const node of document.querySelectorAll(".highlight")) node.classList.remove("highlight");
  if (quoteId === null) return;
  for (const node of document.querySelectorAll(`[data-quote-id="${CSS.escape(quoteId)}"]`)) {
    node.classList.add("highlight");
  }
}

/** "RTX 4090 24GB" for "NVIDIA GeForce RTX 4090 24GB": the maker is the same on every row. */
function shortGpuName(gpuId) {
  const name = state.gpuNames.get(gpuId) ?? gpuId.toUpperCase();
  return name.replace(/^NVIDIA\s+/i, "").replace(/^GeForce\s+/i, "");
}

/** The muted "range low – high" line, or nothing when the figure is exact. */
function rangeLine(lang, range, show) {
  if (range.low === range.high) return [];
  return [element("div", "muted range", translate(lang, "range", { low: show(lang, range.low), high: show(lang, range.high) }))];
}

function quoteRow(response, quote, lang) {
  const row = element("tr");
  row.dataset.quoteId = quote.id;
  if (quote.stale) row.classList.add("stale");
  const rank = element("td", "", String(quote.rank));
  for (const mark of marksOf(response, quote)) rank.append(" ", element("span", `badge badge-${mark}`, translate(lang, mark)));
  const offer = element("td");
  offer.append(element("strong", "", state.vendorNames.get(quote.vendor) || quote.vendor),
    element("div", "muted", `${quote.city} · ${quote.offer_id}`));
  const gpu = element("td", "", shortGpuName(quote.gpu));
  const cards = element("td", "", String(quote.cards));
  if (quote.nodes > 1) cards.append(element("div", "muted", translate(lang, "nodes", { n: quote.nodes })));
  const pricing = element("td", "", pricingName(lang, quote.pricing));
  pricing.append(element("div", "muted", translate(lang, "billed", {
    hours: hours(lang, quote.billed_hours), rate: money(lang, quote.hourly_rate_cny) })));
  const time = element("td", "num", hours(lang, quote.hours.expected));
  time.append(...rangeLine(lang, quote.hours, hours));
  const cost = element("td", "num");
  cost.append(element("span", "cost", money(lang, quote.cost_cny.expected)), ...rangeLine(lang, quote.cost_cny, money));
  const cardHour = element("td", "num", money(lang, quote.effective_card_hour_cny));
  const fetched = element("td", "fetched", age(lang, quote.price_fetched_at));
  fetched.title = timestamp(lang, quote.price_fetched_at);
  if (quote.stale) fetched.append(" ", element("span", "badge badge-stale", translate(lang, "stale")));
  const notes = element("td", "notes");
  for (const warning of quote.warnings ?? []) notes.append(element("div", "", warning));
  row.append(rank, offer, gpu, cards, pricing, time, cost, cardHour, fetched, notes);
  row.addEventListener("mouseenter", () => highlight(quote.id));
  row.addEventListener("mouseleave", () => highlight(null));
  return row;
}

function renderExcluded(excluded, lang) {
  const items = EXCLUDED_REASONS.filter((reason) => excluded?.[reason] > 0).map((reason) =>
    translate(lang, `excluded_${reason}`, { n: excluded[reason] }));
  return items.length ? translate(lang, "excluded", { items: items.join(lang === "zh" ? "，" : ", ") }) : "";
}

function renderResponse(response) {
  const lang = state.lang;
  document.getElementById("results").hidden = false;
  document.getElementById("summary").textContent = response.summary;
  const oldest = response.snapshot?.oldest_fetched_at;
  document.getElementById("snapshot").textContent = oldest
    ? translate(lang, "snapshot", { version: response.snapshot.version,
      when: `${age(lang, oldest)} (${timestamp(lang, oldest)})` })
    : "";
  const warnings = document.getElementById("warnings");
  warnings.replaceChildren(...(response.warnings ?? []).map((text) => element("li", "", text)));
  document.getElementById("quotes").tBodies[0].replaceChildren(
    ...response.quotes.map((quote) => quoteRow(response, quote, lang)));
  renderPlot(document.getElementById("plot-area"), document.getElementById("tooltip"), response.quotes,
    response, { lang, onFocus: highlight, gpuName: shortGpuName });
  document.getElementById("excluded").textContent = renderExcluded(response.excluded, lang);
  document.getElementById("status").textContent = response.quotes.length
    ? translate(lang, "done", { n: response.quotes.length })
    : translate(lang, "no_quotes");
}

// ---- wiring -------------------------------------------------------------------------------------

async function submitQuote() {
  clearErrors();
  const button = document.getElementById("submit");
  const status = document.getElementById("status");
  button.disabled = true;
  status.textContent = translate(state.lang, "loading");
  try {
    const reply = await fetch("/quote", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(buildRequest(form.elements)),
    });
    const body = await reply.json().catch(() => ({ title: reply.statusText, status: reply.status }));
    if (!reply.ok) {
      // Results for other inputs would read as the answer to these: take them away.
      status.textContent = "";
      document.getElementById("results").hidden = true;
      state.response = null;
      showProblem(body);
      return;
    }
    state.response = body;
    renderResponse(body);
  } catch (error) {
    status.textContent = "";
    document.getElementById("form-error").textContent = translate(state.lang, "request_failed", { reason: error.message });
  } finally {
    button.disabled = false;
  }
}

function fillOptions(select, items) {
  select.append(...items.map(([value, label]) => {
    const option = element("option", "", label);
    option.value = value;
    return option;
  }));
}

async function loadChoices() {
  try {
    const [gpuReply, vendorReply] = await Promise.all([fetch("/gpus"), fetch("/vendors")]);
    const { gpus } = await gpuReply.json();
    const { vendors } = await vendorReply.json();
    const gpuItems = gpus.map((gpu) => [gpu.id, gpu.name]);
    for (const gpu of gpus) state.gpuNames.set(gpu.id, gpu.name);
    for (const vendor of vendors) if (vendor.name) state.vendorNames.set(vendor.vendor, vendor.name);
    fillOptions(form.elements.reference_gpu, gpuItems);
    fillOptions(form.elements.gpus, gpuItems);
    fillOptions(form.elements.vendors, vendors.map((vendor) => [vendor.vendor,
      `${vendor.name || vendor.vendor}${vendor.city ? ` (${vendor.city})` : ""}${vendor.stale ? " ⚠" : ""}`]));
    for (const option of form.elements.vendors.options) {
      const vendor = vendors.find((item) => item.vendor === option.value);
      if (vendor?.stale) option.classList.add("stale");
      option.title = vendor?.last_success_at ? timestamp(state.lang, vendor.last_success_at) : "";
    }
  } catch (error) {
    document.getElementById("form-error").textContent = translate(state.lang, "request_failed", { reason: error.message });
  }
  form.dataset.ready = "true";
}

function setLanguage(lang) {
  state.lang = lang;
  form.elements.lang.value = lang;
  applyLanguage(document, lang);
}

setLanguage(initialLanguage(window.location, navigator.language));
form.addEventListener("submit", (event) => {
  event.preventDefault();
  submitQuote();
});
form.elements.lang.addEventListener("change", () => {
  setLanguage(form.elements.lang.value);
  // The summary is written by the service in the language asked for, so ask again.
  if (state.response) submitQuote();
});
loadChoices();

// The quote explorer: reads the form into a QuoteRequest, POSTs /quote, and shows the ranked quotes as
// a table and a scatter plot. The API is the only validator: what it rejects is shown next to the
// field it names, so the page never disagrees with what a chatbot or script would be told.

import { applyLanguage, errorSentence, initialLanguage, translate } from "./i18n.js";
import { age, hours, money, pricingName, timestamp } from "./format.js";
import { renderPlot } from "./plot.js";

const MARKS = ["cheapest", "fastest", "recommended", "safe"];
const EXCLUDED_REASONS = ["memory", "deadline", "budget", "stale", "capacity", "filters"];
const ILLUSTRATIVE_LABEL = "illustrative reference price";
const DEFAULT_REFERENCE_GPU = "rtx4090";
// The request fields this page can send, when the live OpenAPI document cannot be read: a field the
// service does not have is never sent (it would be refused as unknown).
const KNOWN_FIELDS = new Set(["workload", "workload.gpu_hours", "workload.reference_gpu",
  "workload.speed_ratios", "workload.model", "workload.model_params_b", "workload.task", "workload.precision",
  "workload.kind", "workload.tokens", "workload.mfu", "workload.runs", "workload.cards_per_run", "workload.hours",
  "workload.replicas", "workload.target_tokens_per_s", "workload.concurrent_requests",
  "workload.replica_tokens_per_s", "workload.growth_factor",
  "workload.checkpoint_interval_h", "workload.checkpoint_minutes", "workload.restart_minutes",
  "gpus", "regions", "vendors", "pricing", "card_counts", "deadline_hours", "budget_cny", "deadline_confidence",
  "budget_confidence", "allow_spot", "rank_by", "time_value_cny_per_hour", "limit", "lang"]);

const form = document.getElementById("quote-form");
const state = { lang: "en", gpuNames: new Map(), vendorNames: new Map(), response: null, problem: null,
  fields: KNOWN_FIELDS };

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

/** "jiangsu, 深圳" → ["jiangsu", "深圳"]: names as typed (the API reads Chinese place names too). */
function nameList(text) {
  const names = text.split(/[,，、;；]+/).map((name) => name.trim()).filter(Boolean);
  return names.length ? names : undefined;
}

/** "h800=3.2, a100-80g=1.6" → {h800: 3.2, "a100-80g": 1.6}; a value that is no number is sent as
 * typed so the API names the field. */
function speedRatios(text) {
  const ratios = {};
  for (const entry of text.split(/[,，;；\n]+/).map((item) => item.trim()).filter(Boolean)) {
    const [gpu, ...rest] = entry.split(/\s*[=:：＝]\s*/);
    ratios[gpu] = numberOrText(rest.join("=")) ?? "";
  }
  return Object.keys(ratios).length ? ratios : undefined;
}

/** "true" / "false" from a select as the boolean, "" (the service's default) as nothing sent. */
function yesNo(text) {
  return text === "" ? undefined : text === "true";
}

/** `request` without the fields the service does not know (by dotted path). */
function knownOnly(request, prefix = "") {
  const kept = {};
  for (const [name, value] of Object.entries(request)) {
    const path = prefix + name;
    if (value === undefined || !state.fields.has(path)) continue;
    const nested = value !== null && typeof value === "object" && !Array.isArray(value) && path === "workload";
    kept[name] = nested ? knownOnly(value, `${path}.`) : value;
  }
  return kept;
}

/** The QuoteRequest the form describes; empty fields are left out so the API's defaults apply. */
function buildRequest(elements) {
  const text = (name) => elements[name].value;
  const cardCounts = text("card_counts").split(/[\s,，、]+/).filter(Boolean).map(numberOrText);
  const gpus = selectedValues(elements.gpus);
  const vendors = selectedValues(elements.vendors);
  const pricing = selectedValues(elements.pricing);
  // Hours on a reference card convert between GPUs; a serving job's wall-clock hours and a job sized by
  // its tokens have nothing to convert, so the page's default reference GPU is not sent with them.
  const converts = text("kind") !== "serving" && text("tokens").trim() === "";
  return knownOnly({
    workload: {
      gpu_hours: numberOrText(text("gpu_hours")),
      reference_gpu: converts ? text("reference_gpu") || undefined : undefined,
      speed_ratios: speedRatios(text("speed_ratios")),
      model: text("model").trim() || undefined,
      model_params_b: numberOrText(text("model_params_b")),
      task: text("task") || undefined,
      precision: text("precision") || undefined,
      kind: text("kind") || undefined,
      tokens: numberOrText(text("tokens")),
      mfu: numberOrText(text("mfu")),
      runs: numberOrText(text("runs")),
      cards_per_run: numberOrText(text("cards_per_run")),
      hours: numberOrText(text("serving_hours")),
      replicas: numberOrText(text("replicas")),
      target_tokens_per_s: numberOrText(text("target_tokens_per_s")),
      concurrent_requests: numberOrText(text("concurrent_requests")),
      replica_tokens_per_s: numberOrText(text("replica_tokens_per_s")),
      growth_factor: numberOrText(text("growth_factor")),
      checkpoint_interval_h: numberOrText(text("checkpoint_interval_h")),
      checkpoint_minutes: numberOrText(text("checkpoint_minutes")),
      restart_minutes: numberOrText(text("restart_minutes")),
    },
    gpus: gpus.length ? gpus : undefined,
    regions: nameList(text("regions")),
    cities: nameList(text("cities")),
    vendors: vendors.length ? vendors : undefined,
    pricing: pricing.length ? pricing : undefined,
    card_counts: cardCounts.length ? cardCounts : undefined,
    deadline_hours: numberOrText(text("deadline_hours")),
    budget_cny: numberOrText(text("budget_cny")),
    deadline_confidence: text("deadline_confidence"),
    budget_confidence: text("budget_confidence"),
    allow_spot: yesNo(text("allow_spot")),
    rank_by: text("rank_by"),
    time_value_cny_per_hour: numberOrText(text("time_value_cny_per_hour")),
    limit: numberOrText(text("limit")),
    lang: text("lang"),
  });
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
  for (const message of form.querySelectorAll(".field-error")) {
    message.textContent = "";
    message.removeAttribute("title");
  }
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

/** What the person sees a field called: its label without the "(comma-separated)" hint. */
function fieldName(field) {
  const label = field.querySelector("label")?.textContent ?? field.dataset.field;
  return label.replace(/\s*[(（][^)）]*[)）]\s*/g, " ").trim();
}

/** A field's name inside a sentence; for one entry of a list, "every entry of …". */
function nameInSentence(item, name) {
  const lower = state.lang === "en" && /^.[a-z]/.test(name) ? name.charAt(0).toLowerCase() + name.slice(1) : name;
  return /\[[^\]]*\]/.test(String(item.field ?? "")) ? translate(state.lang, "each_of", { name: lower }) : name;
}

function showProblem(problem) {
  state.problem = problem;
  const unplaced = [];
  for (const item of problem.errors ?? []) {
    const field = fieldFor(errorPath(item));
    const reason = String(item.reason ?? "");
    if (!field) {
      const sentence = errorSentence(state.lang, reason, item.field ?? "");
      unplaced.push(item.field && sentence === reason ? `${item.field}: ${reason}` : sentence);
      continue;
    }
    field.classList.add("invalid");
    const message = field.querySelector(".field-error");
    const sentence = errorSentence(state.lang, reason, nameInSentence(item, fieldName(field)));
    message.textContent = message.textContent ? `${message.textContent} ${sentence}` : sentence;
    // The API's own words stay at hand, as a chatbot or script would see them.
    message.title = message.title ? `${message.title}; ${reason}` : reason;
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
  const rank = element("td", "", quote.rank ? String(quote.rank) : "–"); // 0: returned below the top
  for (const mark of marksOf(response, quote)) rank.append(" ", element("span", `badge badge-${mark}`, translate(lang, mark)));
  const offer = element("td");
  offer.append(element("strong", "", state.vendorNames.get(quote.vendor) || quote.vendor));
  if (quote.label === ILLUSTRATIVE_LABEL) {
    row.classList.add("illustrative");
    const badge = element("span", "badge badge-illustrative", translate(lang, "illustrative"));
    badge.title = translate(lang, "illustrative_title");
    offer.append(" ", badge);
  }
  if (quote.spot) {
    const badge = element("span", "badge badge-spot", translate(lang, "spot"));
    badge.title = translate(lang, "spot_title");
    offer.append(" ", badge);
  }
  if (quote.held_back) {
    // The feed now asks another price, held back until a refresh confirms it: said on the row itself.
    const held = quote.held_back;
    const badge = element("span", "badge badge-held", translate(lang, "held_back"));
    badge.title = translate(lang, "held_back_title", {
      price: money(lang, held.price_cny), previous: money(lang, held.previous_cny) });
    offer.append(" ", badge);
  }
  const place = quote.zone ? `${quote.city} (${quote.zone})` : quote.city;
  offer.append(element("div", "muted", `${place} · ${quote.offer_id}`));
  if (quote.city_assumed) {
    const badge = element("span", "badge badge-assumed", translate(lang, "city_assumed"));
    badge.title = translate(lang, "city_assumed_title", { zone: quote.zone });
    offer.append(badge);
  }
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
  const interruptions = quote.interruptions;
  if (interruptions && interruptions.replica_down_share === undefined && interruptions.hours_lost > 0) {
    notes.append(element("div", "muted", translate(lang, "interruptions", {
      count: interruptions.expected, hours: hours(lang, interruptions.hours_lost),
      high: interruptions.high_includes ?? 0 })));
  }
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
  document.getElementById("illustrative-note").hidden =
    !response.quotes.some((quote) => quote.label === ILLUSTRATIVE_LABEL);
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
    state.problem = null;
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

/** Datalist suggestions: each value once, in the order first seen. */
function fillSuggestions(id, values) {
  const unique = [...new Set(values.filter(Boolean))];
  document.getElementById(id).replaceChildren(...unique.map((value) => {
    const option = element("option");
    option.value = value;
    return option;
  }));
}

/** The dotted paths of QuoteRequest's fields in the service's OpenAPI document, and its pricing kinds. */
function requestSchema(openapi) {
  const schemas = openapi?.components?.schemas ?? {};
  const request = schemas.QuoteRequest?.properties;
  if (!request) return null;
  const fields = new Set(Object.keys(request));
  const workloadRef = request.workload?.$ref?.split("/").pop();
  for (const name of Object.keys(schemas[workloadRef]?.properties ?? {})) fields.add(`workload.${name}`);
  const list = [request.pricing, ...(request.pricing?.oneOf ?? [])].find((option) => option?.type === "array");
  const items = list?.items ?? {};
  const pricing = [items, ...(items.oneOf ?? []), ...(items.anyOf ?? [])].flatMap((option) => option.enum ?? (option.const === undefined ? [] : [option.const]));
  return { fields, pricing: pricing.filter((kind) => typeof kind === "string") };
}

/** Shows the inputs for the fields the service has and hides the rest; adds any new pricing kind. */
function applySchema(schema) {
  if (!schema) return;
  state.fields = schema.fields;
  for (const field of form.querySelectorAll(".field[data-field]")) {
    field.hidden = !schema.fields.has(field.dataset.field);
  }
  const offered = new Set([...form.elements.pricing.options].map((option) => option.value));
  for (const kind of schema.pricing.filter((item) => !offered.has(item))) {
    const option = element("option", "", pricingName(state.lang, kind));
    option.value = kind;
    if (translate(state.lang, `pricing_${kind}`) !== `pricing_${kind}`) option.dataset.i18n = `pricing_${kind}`;
    form.elements.pricing.append(option);
  }
}

async function loadSchema() {
  try {
    const reply = await fetch("/schema/openapi.json");
    if (reply.ok) applySchema(requestSchema(await reply.json()));
  } catch {
    // Without the document the page sends only the fields it was written for.
  }
}

async function loadModels() {
  try {
    const { models } = await (await fetch("/models")).json();
    fillSuggestions("model-names", models.map((model) => model.id));
  } catch {
    // The model field still takes any name; the API says which it knows.
  }
}

/** The vendor's freshness in words: when it last fetched, how old its oldest price is, whether stale. */
function vendorTitle(vendor) {
  if (!vendor) return "";
  const parts = [];
  if (vendor.last_success_at) {
    parts.push(translate(state.lang, "vendor_fetched", { when: timestamp(state.lang, vendor.last_success_at) }));
  }
  if (vendor.oldest_price_at) {
    parts.push(translate(state.lang, "vendor_oldest_price", { age: age(state.lang, vendor.oldest_price_at) }));
  }
  if (vendor.stale) parts.push(translate(state.lang, "vendor_stale"));
  return parts.join("; ");
}

async function loadChoices() {
  const extras = Promise.all([loadSchema(), loadModels()]);
  try {
    const [gpuReply, vendorReply] = await Promise.all([fetch("/gpus"), fetch("/vendors")]);
    const { gpus } = await gpuReply.json();
    const { vendors } = await vendorReply.json();
    const gpuItems = gpus.map((gpu) => [gpu.id, gpu.name]);
    for (const gpu of gpus) state.gpuNames.set(gpu.id, gpu.name);
    for (const vendor of vendors) if (vendor.name) state.vendorNames.set(vendor.vendor, vendor.name);
    fillOptions(form.elements.reference_gpu, gpuItems);
    if (gpus.some((gpu) => gpu.id === DEFAULT_REFERENCE_GPU)) form.elements.reference_gpu.value = DEFAULT_REFERENCE_GPU;
    fillOptions(form.elements.gpus, gpuItems);
    fillSuggestions("region-names", vendors.map((vendor) => vendor.region));
    // Offers are in the city of the zone their stock is in, which need not be the vendor's own.
    fillSuggestions("city-names", vendors.flatMap((vendor) => [vendor.city, ...(vendor.cities || [])]));
    fillOptions(form.elements.vendors, vendors.map((vendor) => [vendor.vendor,
      `${vendor.name || vendor.vendor}${vendor.city ? ` (${vendor.city})` : ""}${vendor.stale ? " ⚠" : ""}`]));
    for (const option of form.elements.vendors.options) {
      const vendor = vendors.find((item) => item.vendor === option.value);
      if (vendor?.stale) option.classList.add("stale");
      option.title = vendorTitle(vendor);
    }
  } catch (error) {
    document.getElementById("form-error").textContent = translate(state.lang, "request_failed", { reason: error.message });
  }
  await extras;
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
  else if (state.problem) {
    const problem = state.problem;
    clearErrors();
    showProblem(problem);
  }
});
loadChoices();

// Number, money and age formatting shared by the table, the plot and its tooltip.

import { translate } from "./i18n.js";

const LOCALES = { en: "en-US", zh: "zh-CN" };

function locale(lang) {
  return LOCALES[lang] || LOCALES.en;
}

/** ¥384.00: amounts arrive rounded to the fen, so two decimals always show exactly. */
export function money(lang, amountCny) {
  const digits = new Intl.NumberFormat(locale(lang), {
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
  }).format(amountCny);
  return `¥${digits}`;
}

/** Hours with at most two decimals: 48, 16, 5.33. */
export function hours(lang, value) {
  return new Intl.NumberFormat(locale(lang), { maximumFractionDigits: 2 }).format(value);
}

/** "3 h ago" from an ISO timestamp, relative to `nowMs`. */
export function age(lang, isoTimestamp, nowMs = Date.now()) {
  const elapsedS = Math.max(0, (nowMs - Date.parse(isoTimestamp)) / 1000);
  if (elapsedS < 60) return translate(lang, "just_now");
  if (elapsedS < 3600) return translate(lang, "ago_minutes", { n: Math.floor(elapsedS / 60) });
  if (elapsedS < 172800) return translate(lang, "ago_hours", { n: Math.floor(elapsedS / 3600) });
  return translate(lang, "ago_days", { n: Math.floor(elapsedS / 86400) });
}

/** The full local date and time, for titles and tooltips. */
export function timestamp(lang, isoTimestamp) {
  return new Date(isoTimestamp).toLocaleString(locale(lang));
}

/** "per card-hour" for a pricing kind; unknown kinds show as sent. */
export function pricingName(lang, kind) {
  const key = `pricing_${kind}`;
  const text = translate(lang, key);
  return text === key ? kind : text;
}

"""The one-paragraph summary a chatbot can repeat, in English or Chinese.

It says, in this order: the recommendation with its time and cost ranges; what a single card would cost
and take against the fastest option; where a term package overtakes hourly pricing (when one is quoted);
and the main caveat: the first response warning, else the recommendation's first warning, else how
uncertain the multi-card speed-up is. With nothing to quote it says why (the excluded counts) and what to
loosen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from schemas.quote import Excluded, Lang, Quote, Range
from service.quote._billing import PERIOD_HOURS
from service.quote._money import format_cny
from service.quote._texts import hours_text, number_text, text

__all__ = ["empty_summary", "quote_summary"]

_PRICING_NAMES: dict[Lang, dict[str, str]] = {
    "en": {"card_hour": "billed per card-hour", "node_hour": "billed per node-hour",
           "bundle": "a multi-card bundle", "term": "a prepaid package"},
    "zh": {"card_hour": "按卡时计费", "node_hour": "按节点时计费", "bundle": "多卡打包", "term": "包期套餐"},
}  # fmt: skip
_REASONS: dict[Lang, dict[str, str]] = {
    "en": {"memory": "memory", "capacity": "capacity", "deadline": "the deadline", "budget": "the budget",
           "stale": "stale prices", "filters": "the filters"},
    "zh": {"memory": "显存", "capacity": "卡数/库存", "deadline": "期限", "budget": "预算", "stale": "价格过期",
           "filters": "筛选条件"},
}  # fmt: skip
_SINGLE_CARD: dict[Lang, dict[str, str]] = {
    "en": {
        "none": "A single card cannot run it ({reason}); the fastest option is {fastest}.",
        "none_fastest": "A single card cannot run it ({reason}); the recommendation is also the fastest option.",
        "needs_more": "it needs at least {min_cards} cards of memory",
        "no_offer": "no single-card offer fits",
        "fastest": "A single card is also the fastest option.",
        "recommended": "That is the single-card option; the fastest option is {fastest}.",
        "recommended_fastest": "It is also the fastest option; a single card: {single}.",
        "other": "A single card: {single}; the fastest option: {fastest}.",
        "trade_more": " Against one card, the fastest option finishes {hours} h sooner for {cost} more.",
        "trade_less": " Against one card, the fastest option finishes {hours} h sooner and costs {cost} less.",
    },
    "zh": {
        "none": "单卡无法运行（{reason}）；最快方案：{fastest}。",
        "none_fastest": "单卡无法运行（{reason}）；推荐方案也是最快方案。",
        "needs_more": "显存至少需要 {min_cards} 张卡",
        "no_offer": "没有符合条件的单卡报价",
        "fastest": "单卡即是最快方案。",
        "recommended": "这是单卡方案；最快方案：{fastest}。",
        "recommended_fastest": "这也是最快方案；单卡：{single}。",
        "other": "单卡：{single}；最快方案：{fastest}。",
        "trade_more": "与单卡相比，最快方案早 {hours} 小时完成，多花 {cost}。",
        "trade_less": "与单卡相比，最快方案早 {hours} 小时完成，还便宜 {cost}。",
    },
}
_HINTS: dict[Lang, dict[str, str]] = {
    "en": {
        "memory": "allow more cards (card_counts) or GPUs with more memory",
        "capacity": "ask for card counts the offers sell (up to one machine, or a cluster for more)",
        "deadline": "relax deadline_hours or allow more cards",
        "budget": "raise budget_cny or allow fewer cards",
        "stale": "refresh the prices",
        "filters": "widen the gpus, regions, vendors or pricing filters",
    },
    "zh": {
        "memory": "增加卡数（card_counts）或选择显存更大的 GPU",
        "capacity": "选择服务商提供的卡数（单机以内，更多卡请选集群）",
        "deadline": "放宽 deadline_hours 或增加卡数",
        "budget": "提高 budget_cny 或减少卡数",
        "stale": "刷新价格",
        "filters": "放宽 gpus、regions、vendors 或 pricing 筛选",
    },
}


def _span(values: Range, unit: str, *, money: bool, lang: Lang) -> tuple[str, str]:
    """The expected figure and, when the range is not a point, its ``(low–high)`` suffix."""
    show = format_cny if money else hours_text
    expected = show(values.expected)
    if values.low == values.high:
        return expected, ""
    if lang == "zh":
        return expected, f"（{show(values.low)}–{show(values.high)}{unit}）"
    return expected, f" ({show(values.low)}–{show(values.high)}{unit})"


def _option(quote: Quote, names: Mapping[str, str], lang: Lang) -> str:
    vendor = names.get(quote.vendor) or quote.vendor
    place = quote.city if quote.city == quote.region else f"{quote.city}, {quote.region}"
    hours, hours_range = _span(quote.hours, " h" if lang == "en" else " 小时", money=False, lang=lang)
    cost, cost_range = _span(quote.cost_cny, "", money=True, lang=lang)
    if lang == "zh":
        return (
            f"{vendor}（{place}）的 {quote.cards} 张 {quote.gpu}，"
            f"{_PRICING_NAMES[lang][quote.pricing]}，约 {hours} 小时{hours_range}，费用 {cost}{cost_range}"
        )
    return (
        f"{quote.cards} × {quote.gpu} from {vendor} ({place}), "
        f"{_PRICING_NAMES[lang][quote.pricing]}: about {hours} h{hours_range} for {cost}{cost_range}"
    )


def _single_vs_fastest(
    single: Quote | None,
    fastest: Quote,
    recommended: Quote,
    names: Mapping[str, str],
    min_cards: int | None,
    lang: Lang,
) -> str:
    templates = _SINGLE_CARD[lang]
    fastest_text = _option(fastest, names, lang)
    if single is None:
        needs_more = min_cards is not None and min_cards > 1
        reason = templates["needs_more" if needs_more else "no_offer"].format(min_cards=min_cards)
        case = "none_fastest" if fastest.id == recommended.id else "none"
        return templates[case].format(reason=reason, fastest=fastest_text)
    if single.id == fastest.id:
        case = "fastest"
    elif single.id == recommended.id:
        case = "recommended"
    elif fastest.id == recommended.id:
        case = "recommended_fastest"
    else:
        case = "other"
    comparison = templates[case].format(single=_option(single, names, lang), fastest=fastest_text)
    return comparison + _trade_off(single, fastest, lang)


def _trade_off(single: Quote, fastest: Quote, lang: Lang) -> str:
    """What the fastest option saves against one card, and what it costs more (or less)."""
    hours_saved = number_text(single.hours.expected - fastest.hours.expected)
    extra_cny = fastest.cost_cny.expected - single.cost_cny.expected
    key = "trade_more" if extra_cny >= 0 else "trade_less"
    return _SINGLE_CARD[lang][key].format(hours=hours_saved, cost=format_cny(abs(extra_cny)))


def _break_even(quotes: Sequence[Quote], names: Mapping[str, str], lang: Lang) -> str:
    for quote in quotes:
        period = quote.term_period
        if period is None or quote.break_even_hours is None or quote.break_even_hours >= PERIOD_HOURS[period]:
            continue
        name, hours = text(f"period_{period}", lang), number_text(quote.break_even_hours)
        vendor = names.get(quote.vendor) or quote.vendor
        if lang == "zh":
            return f"{vendor} 的 {quote.gpu} 包{name}套餐在每{name}使用超过 {hours} 小时后比按时计费便宜。"
        return f"The {quote.gpu} {name} package from {vendor} beats hourly pricing past {hours} h of use per {name}."
    return ""


def _default_caveat(fastest: Quote, lang: Lang) -> str:
    if fastest.cards > 1:
        low, high = number_text(fastest.speedup.low), number_text(fastest.speedup.high)
        if lang == "zh":
            return f"多卡加速比是估计值（{fastest.cards} 卡为 {low}–{high} 倍），可通过 scaling 传入实测曲线"
        return (
            f"multi-card speed-ups are estimates ({low}–{high}× on {fastest.cards} cards); "
            "pass a measured curve in scaling to narrow them"
        )
    if lang == "zh":
        return "价格每周都在变，下单前请向服务商确认"
    return "prices change weekly; confirm with the vendor before renting"


def quote_summary(
    *,
    recommended: Quote,
    fastest: Quote,
    single: Quote | None,
    quotes: Sequence[Quote],
    response_warnings: Sequence[str],
    vendor_names: Mapping[str, str],
    min_cards: int | None,
    lang: Lang,
) -> str:
    """The paragraph for a response with quotes; ``vendor_names`` maps vendor ids to display names."""
    caveats = [*response_warnings, *recommended.warnings]
    caveat = caveats[0] if caveats else _default_caveat(fastest, lang)
    if lang == "zh":
        opening = f"推荐：{_option(recommended, vendor_names, lang)}。"
        closing = f"主要提醒：{caveat}。"
    else:
        opening = f"Recommended: {_option(recommended, vendor_names, lang)}."
        closing = f"Main caveat: {caveat}."
    parts = [
        opening,
        _single_vs_fastest(single, fastest, recommended, vendor_names, min_cards, lang),
        _break_even(quotes, vendor_names, lang),
        closing,
    ]
    return " ".join(part for part in parts if part) if lang == "en" else "".join(parts)


def empty_summary(excluded: Excluded, *, offers_loaded: int, lang: Lang) -> str:
    """The paragraph for a response with no quotes: why, and what to loosen."""
    if offers_loaded == 0:
        return "目前没有已加载的报价。" if lang == "zh" else "No offers are loaded yet."
    counts = {name: getattr(excluded, name) for name in _REASONS[lang]}
    reasons = [(count, name) for name, count in counts.items() if count]
    reasons.sort(key=lambda pair: -pair[0])
    hint = _HINTS[lang][reasons[0][1]] if reasons else _HINTS[lang]["filters"]
    if lang == "zh":
        listed = "，".join(f"{_REASONS[lang][name]} {count} 个" for count, name in reasons)
        return f"没有符合条件的方案（排除的候选：{listed}）。建议：{hint}。"
    listed = ", ".join(f"{count} for {_REASONS[lang][name]}" for count, name in reasons)
    return f"No offer fits this job (candidates excluded: {listed}). Try to {hint}."

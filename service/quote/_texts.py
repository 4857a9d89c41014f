"""Every sentence and word of prose the engine and the CLI write, in English and Chinese, in one table.

Each message id maps to an ``en`` and a ``zh`` template using the same ``str.format`` fields; numbers
are formatted before they get here (``format_cny``, ``hours_text``) so both languages show the same
figures. Code picks which messages to say, in what order and with which fields; how a language words,
punctuates and joins them lives here (``join_sentences``, ``join_list``), so a rewording is a table edit.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from schemas.quote import Lang
from service.quote._money import cents

__all__ = ["TEMPLATES", "hours_text", "join_text", "number_text", "text"]

TEMPLATES: dict[str, dict[Lang, str]] = {
    # Names.
    "period_day": {"en": "day", "zh": "日"},
    "period_week": {"en": "week", "zh": "周"},
    "period_month": {"en": "month", "zh": "月"},
    # Line items.
    "item_card_hour": {
        "en": "{cards} × {gpu} at {price}/card-hour × {hours} h",
        "zh": "{cards} 张 {gpu}，{price}/卡时 × {hours} 小时",
    },
    "item_minimum": {"en": " (minimum {hours} h billed)", "zh": "（最低计费 {hours} 小时）"},
    "item_node": {
        "en": "{nodes} × {node_cards}-card node at {price}/node-hour × {hours} h",
        "zh": "{nodes} 个 {node_cards} 卡节点，{price}/节点时 × {hours} 小时",
    },
    "item_network": {
        "en": "network premium: {nodes} node(s) at {price}/node-hour × {hours} h",
        "zh": "网络附加费：{nodes} 个节点，{price}/节点时 × {hours} 小时",
    },
    "item_storage": {
        "en": "storage: {nodes} node(s) at {price}/node-hour × {hours} h",
        "zh": "存储费：{nodes} 个节点，{price}/节点时 × {hours} 小时",
    },
    "item_bundle": {
        "en": "{bundles} × {bundle_cards}-card bundle at {price}/hour × {hours} h",
        "zh": "{bundles} 个 {bundle_cards} 卡套餐，{price}/小时 × {hours} 小时",
    },
    "item_bundle_list": {
        "en": "{cards} × {gpu} at the card-hour price {price}/card-hour ({reference}) × {hours} h",
        "zh": "{cards} 张 {gpu} 按卡时价 {price}/卡时（{reference}）× {hours} 小时",
    },
    "item_bundle_discount": {
        "en": "bundle discount: {bundles} × {bundle_cards}-card bundle at {price}/hour, {percent}% off",
        "zh": "多卡打包优惠：{bundles} 个 {bundle_cards} 卡套餐，{price}/小时，便宜 {percent}%",
    },
    "item_term": {
        "en": "{units} × {period} package ({unit_cards} card(s) each) at {price} × {periods} ({hours} h)",
        "zh": "{units} 个包{period}套餐（每个 {unit_cards} 卡），{price} × {periods} 期（{hours} 小时）",
    },
    # Quote warnings.
    "warn_idle": {
        "en": "{idle} of the {billed} billed cards sit idle: {why}",
        "zh": "计费的 {billed} 张卡中有 {idle} 张闲置：{why}",
    },
    "why_nodes": {
        "en": "the offer bills whole {node_cards}-card nodes, at least {min_nodes}",
        "zh": "该报价按整节点（每节点 {node_cards} 卡，最少 {min_nodes} 个）计费",
    },
    "why_machine": {
        "en": "the package rents a whole {billed}-card machine",
        "zh": "该套餐按整机（{billed} 卡）出租",
    },
    "warn_converted": {
        "en": "hours converted from {reference} to {gpu} at {conversion}: {reference_hours} h on one card "
        "becomes {hours} h{hours_range}",
        "zh": "工时从 {reference} 换算到 {gpu}，按{conversion}：单卡 {reference_hours} 小时折合 {hours} 小时"
        "{hours_range}",
    },
    "conversion_catalog": {
        "en": "{factors}× by {low_source} to {high_source} (pass a measured ratio in workload.speed_ratios "
        "to narrow it)",
        "zh": "{factors} 倍（{low_source}至{high_source}；可在 workload.speed_ratios 传入实测速度比以收窄）",
    },
    "conversion_measured": {"en": "your measured ratio {ratio}×", "zh": "您实测的速度比 {ratio} 倍"},
    "source_measured": {"en": "measured throughput", "zh": "实测吞吐"},
    "source_peak": {"en": "peak compute", "zh": "峰值算力"},
    "source_bandwidth": {"en": "memory bandwidth", "zh": "显存带宽"},
    "source_derived": {"en": "datasheet ratios", "zh": "规格参数推算"},
    "warn_stale": {
        "en": "price fetched {age} h ago, older than the {max_age} h limit: confirm it with the vendor",
        "zh": "价格抓取于 {age} 小时前，超过 {max_age} 小时的有效期，请向服务商确认",
    },
    "warn_deadline": {
        "en": "deadline at risk: up to {hours} h if speed is at the low end, past the {deadline} h deadline",
        "zh": "可能超出期限：速度偏低时最多需 {hours} 小时，超过 {deadline} 小时的期限",
    },
    "warn_budget": {
        "en": "budget at risk: up to {cost} at the high end, over the {budget} budget",
        "zh": "可能超出预算：最高 {cost}，超过 {budget} 的预算",
    },
    "warn_minimum": {
        "en": "the offer bills at least {hours} h",
        "zh": "该报价最低计费 {hours} 小时",
    },
    "warn_cluster": {
        "en": "the model needs at least {min_cards} cards of {memory} GB ({need} GB): more than one "
        "{node_cards}-card node can hold, so it runs tensor/pipeline parallel across nodes over {interconnect}",
        "zh": "模型至少需要 {min_cards} 张 {memory} GB 的卡（共 {need} GB），超过单个 {node_cards} 卡节点，"
        "需通过 {interconnect} 跨节点做张量/流水线并行",
    },
    # Response warnings.
    "warn_store_empty": {
        "en": "prices may be stale: the price store came back empty, so these quotes use the last snapshot "
        "held until the next refresh refills it",
        "zh": "价格可能已过期：价格存储重启后为空，报价使用的是最近一次的快照，直到下次刷新重新填充",
    },
    "warn_store": {
        "en": "prices may be stale: the price store is unreachable, so these quotes use the last snapshot held",
        "zh": "价格可能已过期：价格存储无法访问，报价使用的是最近一次的快照",
    },
    "warn_stale_fallback": {
        "en": "no offer with a fresh price qualifies; these quotes use prices older than {max_age} h",
        "zh": "没有价格新鲜的报价符合条件；以下报价使用超过 {max_age} 小时的旧价格",
    },
    "warn_not_comparable": {
        "en": "hours are taken as given on every GPU model ({gpus}), so times are not comparable across "
        "models; set workload.reference_gpu to convert them",
        "zh": "各型号（{gpus}）都按相同工时计算，不同型号之间的时间不可比；请设置 workload.reference_gpu 以换算",
    },
    "warn_cluster_only": {
        "en": "no single machine holds the model ({need} GB at ≤ 90 % of card memory): only cluster "
        "(node-hour) offers qualify, with tensor/pipeline parallelism across nodes",
        "zh": "单台机器放不下该模型（{need} GB，显存占用 ≤ 90%）：只有按节点计费的集群报价符合，需跨节点张量/流水线并行",
    },
    "warn_memory_unchecked": {
        "en": "memory fit not checked: give both workload.model_params_b and workload.task",
        "zh": "未检查显存：请同时提供 workload.model_params_b 和 workload.task",
    },
    "warn_value_without_time": {
        "en": "rank_by=value needs time_value_cny_per_hour; ranked by cost",
        "zh": "rank_by=value 需要 time_value_cny_per_hour；已按费用排序",
    },
    # Joining: how a language strings sentences, and list items, together.
    "join_sentences": {"en": "{first} {then}", "zh": "{first}{then}"},
    "join_list": {"en": "{first}, {then}", "zh": "{first}，{then}"},
    # Summary: the options.
    "pricing_card_hour": {"en": "billed per card-hour", "zh": "按卡时计费"},
    "pricing_node_hour": {"en": "billed per node-hour", "zh": "按节点时计费"},
    "pricing_bundle": {"en": "a multi-card bundle", "zh": "多卡打包"},
    "pricing_term": {"en": "a prepaid package", "zh": "包期套餐"},
    "unit_hours": {"en": " h", "zh": " 小时"},
    "range_suffix": {"en": " ({low}–{high}{unit})", "zh": "（{low}–{high}{unit}）"},
    "place_city_region": {"en": "{city}, {region}", "zh": "{city}, {region}"},
    "option": {
        "en": "{cards} × {gpu} from {vendor} ({place}), {pricing}: "
        "about {hours} h{hours_range} for {cost}{cost_range}",
        "zh": "{vendor}（{place}）的 {cards} 张 {gpu}，{pricing}，约 {hours} 小时{hours_range}，费用 {cost}{cost_range}",
    },
    # Summary: its sentences.
    "summary_recommended": {"en": "Recommended: {option}.", "zh": "推荐：{option}。"},
    "summary_caveat": {"en": "Main caveat: {caveat}.", "zh": "主要提醒：{caveat}。"},
    "single_none": {
        "en": "A single card cannot run it ({reason}); the fastest option is {fastest}.",
        "zh": "单卡无法运行（{reason}）；最快方案：{fastest}。",
    },
    "single_none_fastest": {
        "en": "A single card cannot run it ({reason}); the recommendation is also the fastest option.",
        "zh": "单卡无法运行（{reason}）；推荐方案也是最快方案。",
    },
    "single_needs_more": {
        "en": "it needs at least {min_cards} cards of memory",
        "zh": "显存至少需要 {min_cards} 张卡",
    },
    "single_no_offer": {"en": "no single-card offer fits", "zh": "没有符合条件的单卡报价"},
    "single_fastest": {"en": "A single card is also the fastest option.", "zh": "单卡即是最快方案。"},
    "single_recommended": {
        "en": "That is the single-card option; the fastest option is {fastest}.",
        "zh": "这是单卡方案；最快方案：{fastest}。",
    },
    "single_recommended_fastest": {
        "en": "It is also the fastest option; a single card: {single}.",
        "zh": "这也是最快方案；单卡：{single}。",
    },
    "single_other": {
        "en": "A single card: {single}; the fastest option: {fastest}.",
        "zh": "单卡：{single}；最快方案：{fastest}。",
    },
    "trade_more": {
        "en": " Against one card, the fastest option finishes {hours} h sooner for {cost} more.",
        "zh": "与单卡相比，最快方案早 {hours} 小时完成，多花 {cost}。",
    },
    "trade_less": {
        "en": " Against one card, the fastest option finishes {hours} h sooner and costs {cost} less.",
        "zh": "与单卡相比，最快方案早 {hours} 小时完成，还便宜 {cost}。",
    },
    "break_even": {
        "en": "The {gpu} {period} package from {vendor} beats hourly pricing "
        "past {hours} h of use per {period}.",
        "zh": "{vendor} 的 {gpu} 包{period}套餐在每{period}使用超过 {hours} 小时后比按时计费便宜。",
    },
    "caveat_speedup": {
        "en": "multi-card speed-ups are estimates ({low}–{high}× on {cards} cards); "
        "pass a measured curve in scaling to narrow them",
        "zh": "多卡加速比是估计值（{cards} 卡为 {low}–{high} 倍），可通过 scaling 传入实测曲线",
    },
    "caveat_prices": {
        "en": "prices change weekly; confirm with the vendor before renting",
        "zh": "价格每周都在变，下单前请向服务商确认",
    },
    # Summary with nothing to quote: why (the exclusion reasons) and what to loosen.
    "empty_no_offers": {"en": "No offers are loaded yet.", "zh": "目前没有已加载的报价。"},
    "empty_no_fit": {
        "en": "No offer fits this job (candidates excluded: {excluded}). Try to {hint}.",
        "zh": "没有符合条件的方案（排除的候选：{excluded}）。建议：{hint}。",
    },
    "empty_excluded": {"en": "{count} for {reason}", "zh": "{reason} {count} 个"},
    "reason_memory": {"en": "memory", "zh": "显存"},
    "reason_capacity": {"en": "capacity", "zh": "卡数/库存"},
    "reason_deadline": {"en": "the deadline", "zh": "期限"},
    "reason_budget": {"en": "the budget", "zh": "预算"},
    "reason_stale": {"en": "stale prices", "zh": "价格过期"},
    "reason_filters": {"en": "the filters", "zh": "筛选条件"},
    "hint_memory": {
        "en": "allow more cards (card_counts) or GPUs with more memory",
        "zh": "增加卡数（card_counts）或选择显存更大的 GPU",
    },
    "hint_capacity": {
        "en": "ask for card counts the offers sell (up to one machine, or a cluster for more)",
        "zh": "选择服务商提供的卡数（单机以内，更多卡请选集群）",
    },
    "hint_deadline": {
        "en": "relax deadline_hours or allow more cards",
        "zh": "放宽 deadline_hours 或增加卡数",
    },
    "hint_budget": {"en": "raise budget_cny or allow fewer cards", "zh": "提高 budget_cny 或减少卡数"},
    "hint_stale": {"en": "refresh the prices", "zh": "刷新价格"},
    "hint_filters": {
        "en": "widen the gpus, regions, vendors or pricing filters",
        "zh": "放宽 gpus、regions、vendors 或 pricing 筛选",
    },
    # The CLI's table (``gpuquote quote``).
    "table_rank": {"en": "#", "zh": "#"},
    "table_gpu": {"en": "gpu", "zh": "GPU"},
    "table_cards": {"en": "cards", "zh": "卡数"},
    "table_offer": {"en": "offer", "zh": "报价"},
    "table_pricing": {"en": "pricing", "zh": "计费"},
    "table_hours": {"en": "hours", "zh": "小时"},
    "table_cost": {"en": "cost", "zh": "费用"},
    "table_card_hour": {"en": "¥/card-h", "zh": "¥/卡时"},
    "table_notes": {"en": "notes", "zh": "备注"},
    "table_cheapest": {"en": "cheapest", "zh": "最便宜"},
    "table_fastest": {"en": "fastest", "zh": "最快"},
    "table_recommended": {"en": "recommended", "zh": "推荐"},
    "table_warnings": {"en": "{count} warning(s)", "zh": "{count} 条警告"},
    "table_no_quotes": {"en": "no quotes", "zh": "没有报价"},
    "table_warning": {"en": "warning: {warning}", "zh": "警告：{warning}"},
    "table_excluded": {"en": "{reason} {count}", "zh": "{reason} {count} 个"},
    "table_excluded_none": {"en": "none", "zh": "无"},
    "table_footer": {
        "en": "excluded candidates: {excluded}; snapshot version {version}",
        "zh": "排除的候选：{excluded}；快照版本 {version}",
    },
    "table_reason_memory": {"en": "memory", "zh": "显存"},
    "table_reason_capacity": {"en": "capacity", "zh": "卡数/库存"},
    "table_reason_deadline": {"en": "deadline", "zh": "期限"},
    "table_reason_budget": {"en": "budget", "zh": "预算"},
    "table_reason_stale": {"en": "stale", "zh": "价格过期"},
    "table_reason_filters": {"en": "filters", "zh": "筛选条件"},
}


def text(key: str, lang: Lang, **fields: object) -> str:
    """Message ``key`` in ``lang``, its fields filled in (fields the template does not use are ignored)."""
    return TEMPLATES[key][lang].format(**fields)


def join_text(key: str, parts: Iterable[str], lang: Lang) -> str:
    """The non-empty ``parts`` strung together by the join message ``key`` (``join_sentences``,
    ``join_list``); nothing when there are none."""
    joined = ""
    for part in parts:
        if part:
            joined = text(key, lang, first=joined, then=part) if joined else part
    return joined


def number_text(value: float) -> str:
    """A figure rounded half-up to 0.01 without trailing zeros: ``17.14``, ``16``, ``1,120``."""
    rounded = Decimal(cents(value)) / 100
    return f"{rounded:,.2f}".rstrip("0").rstrip(".")


def hours_text(hours: float) -> str:
    return number_text(hours)

"""Every sentence the engine writes, in English and Chinese, so a chatbot can repeat it as is.

Templates use ``str.format`` fields; numbers are formatted before they get here (``format_cny``,
``hours_text``) so both languages show the same figures.
"""

from __future__ import annotations

from decimal import Decimal

from schemas.quote import Lang
from service.quote._money import cents

__all__ = ["hours_text", "number_text", "text"]

_TEMPLATES: dict[str, dict[Lang, str]] = {
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
        "en": "hours converted from {reference} to {gpu} by performance index ({reference_index:g} → "
        "{gpu_index:g}): {reference_hours} h becomes {hours} h on one card; real speed-ups between models "
        "are often smaller than the index ratio",
        "zh": "工时按性能指数从 {reference} 换算到 {gpu}（{reference_index:g} → {gpu_index:g}）："
        "单卡 {reference_hours} 小时折合 {hours} 小时；不同型号的实际加速通常低于指数比例",
    },
    "warn_stale": {
        "en": "price fetched {age} h ago, older than the {max_age} h limit: confirm it with the vendor",
        "zh": "价格抓取于 {age} 小时前，超过 {max_age} 小时的有效期，请向服务商确认",
    },
    "warn_deadline": {
        "en": "deadline at risk: up to {hours} h if scaling is at the low end, past the {deadline} h deadline",
        "zh": "可能超出期限：加速比偏低时最多需 {hours} 小时，超过 {deadline} 小时的期限",
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
}


def text(key: str, lang: Lang, **fields: object) -> str:
    return _TEMPLATES[key][lang].format(**fields)


def number_text(value: float) -> str:
    """A figure rounded half-up to 0.01 without trailing zeros: ``17.14``, ``16``, ``1,120``."""
    rounded = Decimal(cents(value)) / 100
    return f"{rounded:,.2f}".rstrip("0").rstrip(".")


def hours_text(hours: float) -> str:
    return number_text(hours)

"""The messages about the offers themselves, in English and Chinese (merged into ``texts.TEMPLATES``):
a held-back price, a city assumed for a zone, what each offer can supply when a count is too many, and a
node minimum that makes the billed count the better plan.

The same rules as the rest of the table: one ``en`` and one ``zh`` template per id, with the same
``str.format`` fields, numbers formatted before they arrive.
"""

from __future__ import annotations

from schemas.quote import Lang

__all__ = ["OFFER_TEMPLATES"]

OFFER_TEMPLATES: dict[str, dict[Lang, str]] = {
    "price_per_card_hour": {"en": "{price}/card-hour", "zh": "{price}/卡时"},
    "price_per_node_hour": {"en": "{price}/node-hour", "zh": "{price}/节点时"},
    "price_per_bundle": {"en": "{price}/bundle-hour", "zh": "{price}/套餐时"},
    "price_per_period": {"en": "{price} per {period}", "zh": "{price}/{period}"},
    "warn_held_price": {
        "en": "price held back: the vendor's feed now asks {price} for {offer} (was {previous}, {change}), "
        "seen {age} ago; this quote is at the old price until a second refresh confirms the new one"
        "{at_new}",
        "zh": "价格暂缓采用：服务商最新报价中 {offer} 为 {price}（原为 {previous}，{change}），{age}前获取；"
        "在下一次刷新确认之前，本报价仍按原价计算{at_new}",
    },
    "held_at_new": {"en": ": at the new price it costs about {cost}", "zh": "；按新价约 {cost}"},
    "warn_city_assumed": {
        "en": "the feed's zone {zone} names no city the service knows: the offer is placed in the "
        "vendor's city, {city}; confirm where the cards are before counting on the data's locality",
        "zh": "服务商给出的区域 {zone} 无法对应到已知城市：该报价按服务商所在城市（{city}）计算；"
        "依赖数据就近之前请先确认显卡所在地",
    },
    "idle_billed_cheaper": {
        "en": "; all {billed} cost less and finish sooner: about {hours} h for {cost}",
        "zh": "；直接用满 {billed} 张更便宜也更快：约 {hours} 小时，费用 {cost}",
    },
    "idle_billed_sooner": {
        "en": "; all {billed} cost the same and finish sooner: about {hours} h for {cost}",
        "zh": "；直接用满 {billed} 张费用相同但更快：约 {hours} 小时，费用 {cost}",
    },
    # When nothing fits because no offer sells that many cards: what each can supply, and at what cost.
    "nearest_supply": {
        "en": "no offer inside the filters sells {counts} cards: {supplies}",
        "zh": "筛选范围内没有报价能提供 {counts} 张卡：{supplies}",
    },
    "supply_offer": {
        "en": "{vendor} supplies at most {most} × {gpu} ({limit}){nearest}",
        "zh": "{vendor}最多提供 {most} 张 {gpu}（{limit}）{nearest}",
    },
    "supply_machine": {"en": "one machine", "zh": "单机上限"},
    "supply_stock": {"en": "{stock} in stock", "zh": "库存 {stock} 张"},
    "supply_rental": {"en": "the most one rental holds", "zh": "单次租用上限"},
    "supply_nodes": {"en": "{nodes} nodes at most", "zh": "最多 {nodes} 个节点"},
    "supply_nearest": {
        "en": ", and {cards} × {gpu} take about {hours} h for {cost}",
        "zh": "，{cards} 张 {gpu} 约 {hours} 小时，费用 {cost}",
    },
    "supply_nearest_none": {
        "en": ", though no count it supplies runs the job within the limits",
        "zh": "，但它能提供的卡数都无法在限制内完成任务",
    },
    "hint_allow_supply": {
        "en": "allow a count an offer supplies ({cards}), or widen the filters to offers with more cards",
        "zh": "改用报价能提供的卡数（{cards}），或放宽筛选条件以纳入卡更多的报价",
    },
}

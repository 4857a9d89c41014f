"""The summary's messages, in English and Chinese (merged into ``texts.TEMPLATES``).

The same rules as the rest of the table: one ``en`` and one ``zh`` template per id, with the same
``str.format`` fields, numbers formatted before they arrive.
"""

from __future__ import annotations

from schemas.quote import Lang

__all__ = ["SUMMARY_TEMPLATES"]

SUMMARY_TEMPLATES: dict[str, dict[Lang, str]] = {
    # Summary: the options.
    "pricing_card_hour": {"en": "billed per card-hour", "zh": "按卡时计费"},
    "pricing_node_hour": {"en": "billed per node-hour", "zh": "按节点时计费"},
    "pricing_bundle": {"en": "a multi-card bundle", "zh": "多卡打包"},
    "pricing_term": {"en": "a prepaid package", "zh": "包期套餐"},
    "pricing_mixed": {"en": "prepaid packages plus card-hours", "zh": "包期套餐加按卡时补足"},
    "unit_hours": {"en": " h", "zh": " 小时"},
    "range_suffix": {"en": " ({low}–{high}{unit})", "zh": "（{low}–{high}{unit}）"},
    "place_city_region": {"en": "{city}, {region}", "zh": "{region}{city}"},
    "option": {
        "en": "{cards} × {gpu} from {vendor} ({place}), {pricing}: "
        "about {hours} h{hours_range}{lost} for {cost}{cost_range}",
        "zh": "{vendor}（{place}）的 {cards} 张 {gpu}，{pricing}，约 {hours} 小时{hours_range}{lost}，"
        "费用 {cost}{cost_range}",
    },
    # Summary: its sentences.
    "summary_lead": {"en": "{lead}.", "zh": "{lead}。"},
    "alternative_quantized": {
        "en": "With {precision} weights ({bytes} bytes each; check the model's quality at it) it needs {need} GB: "
        "{option}{saving}.",
        "zh": "若权重量化为 {precision}（每个权重 {bytes} 字节；请确认该精度下的模型质量），只需 {need} GB："
        "{option}{saving}。",
    },
    "alternative_saves": {"en": ", {saving} less", "zh": "，便宜 {saving}"},
    "alternative_fits": {"en": ", within the limits", "zh": "，在限制之内"},
    "summary_recommended": {"en": "Recommended: {option}{note}{risk}.", "zh": "推荐：{option}{note}{risk}。"},
    # The recommendation's risks, in its own sentence, and the plan without them.
    "note_illustrative": {
        "en": ", at an illustrative reference price from a public article, not a live quote",
        "zh": "（示意参考价，取自公开文章，并非实时报价）",
    },
    "note_held": {
        "en": ", at the price served while the vendor's newer one ({price}) is held back for a second look",
        "zh": "（按现行价格计算；服务商的新报价 {price} 暂缓采用，待再次确认）",
    },
    "note_held_cost": {
        "en": ", at the price served while the vendor's newer one ({price}, {cost} for this job) is held "
        "back for a second look",
        "zh": "（按现行价格计算；服务商的新报价 {price} 暂缓采用，待再次确认，按新价本任务约 {cost}）",
    },
    "note_illustrative_others": {
        "en": " (other options named here use illustrative reference prices, not live quotes)",
        "zh": "（下文提到的其他方案使用示意参考价，并非实时报价）",
    },
    "summary_caveat": {"en": "Main caveat: {caveat}.", "zh": "主要提醒：{caveat}。"},
    "summary_caveats": {"en": "Caveats: {caveats}.", "zh": "提醒：{caveats}。"},
    "join_caveats": {"en": "{first}; {then}", "zh": "{first}；{then}"},
    "single_none": {
        "en": "A single card cannot run it ({reason}); the fastest option is {fastest}.",
        "zh": "单卡无法运行（{reason}）；最快方案：{fastest}。",
    },
    "single_none_fastest": {
        "en": "A single card cannot run it ({reason}); the recommendation is also the fastest option.",
        "zh": "单卡无法运行（{reason}）；推荐方案也是最快方案。",
    },
    "fastest_only": {"en": "The fastest option is {fastest}.", "zh": "最快方案：{fastest}。"},
    "serving_same_hours": {
        "en": "Every option stays up the same {hours} h: for serving, more cards add replicas, not speed.",
        "zh": "每个方案都运行同样的 {hours} 小时：推理服务中，多加卡只增加副本，不会更快。",
    },
    "recommended_fastest_only": {"en": "It is also the fastest option.", "zh": "推荐方案也是最快方案。"},
    "single_needs_more": {
        "en": "it needs at least {min_cards} cards of memory",
        "zh": "显存至少需要 {min_cards} 张卡",
    },
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
    "trade_same": {
        "en": " Against one card, the fastest option finishes {hours} h sooner for the same cost.",
        "zh": "与单卡相比，最快方案早 {hours} 小时完成，费用相同。",
    },
    "single_is_recommended_fastest": {
        "en": "It is a single card and also the fastest option.",
        "zh": "这是单卡方案，也是最快方案。",
    },
    "break_even": {
        "en": "The {gpu} {period} package from {vendor} beats hourly pricing "
        "past {hours} h of use per {period}.",
        "zh": "{vendor} 的 {gpu} 包{period}套餐在每{period}使用超过 {hours} 小时后比按时计费便宜。",
    },
    "caveat_speedup": {
        "en": "multi-card speed-ups are estimates ({low}–{high}× on {cards} cards); "
        "pass your measured speed-ups to narrow them",
        "zh": "多卡加速比是估计值（{cards} 卡为 {low}–{high} 倍），传入实测加速比可以收窄",
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
    "empty_nearest": {
        "en": "No offer fits this job (candidates excluded: {excluded}): {nearest}. Try to {hint}.",
        "zh": "没有符合条件的方案（排除的候选：{excluded}）：{nearest}。建议：{hint}。",
    },
    "nearest_budget": {
        "en": "the cheapest way, {cards} × {gpu} from {vendor}, costs {cost} (budget {budget})",
        "zh": "最便宜的方案是{vendor}的 {cards} 张 {gpu}，需 {cost}（预算 {budget}）",
    },
    "nearest_deadline": {
        "en": "the fastest, {cards} × {gpu} from {vendor}, finishes in {hours} h (deadline {deadline} h)",
        "zh": "最快的方案是{vendor}的 {cards} 张 {gpu}，需 {hours} 小时（期限 {deadline} 小时）",
    },
    "nearest_both_none": {
        "en": "no single option meets both the budget and the deadline",
        "zh": "没有一个方案同时满足预算和期限",
    },
    "nearest_cheapest_in_time": {
        "en": "the cheapest that meets the deadline, {cards} × {gpu} from {vendor}, costs {cost}",
        "zh": "满足期限的最便宜方案是{vendor}的 {cards} 张 {gpu}，需 {cost}",
    },
    "nearest_fastest_in_budget": {
        "en": "the fastest within the budget, {cards} × {gpu} from {vendor}, takes {hours} h",
        "zh": "预算内最快的方案是{vendor}的 {cards} 张 {gpu}，需 {hours} 小时",
    },
    "nearest_card_counts": {
        "en": "{cards} would hold this model (card counts allowed: {counts})",
        "zh": "{cards} 即可放得下该模型（当前允许的卡数：{counts}）",
    },
    "nearest_too_large": {
        "en": "the model needs {need} GB, at least {cards}, but no offer sells enough cards: "
        "the largest, from {vendor}, sells {largest}",
        "zh": "该模型需要 {need} GB 显存，至少 {cards}，但没有报价能提供这么多卡：最大的是{vendor}的 {largest}",
    },
    "nearest_too_large_filtered": {
        "en": "the model needs {need} GB, at least {cards}, but no offer within the filters sells enough "
        "cards: the largest, from {vendor}, sells {largest}",
        "zh": "该模型需要 {need} GB 显存，至少 {cards}，但筛选范围内没有报价能提供这么多卡："
        "最大的是{vendor}的 {largest}",
    },
    "cards_of_gpu": {"en": "{cards} × {gpu}", "zh": "{cards} 张 {gpu}"},
    "join_or_list": {"en": "{first} or {then}", "zh": "{first} 或 {then}"},
    "filtered_counts": {"en": "card counts {counts}", "zh": "卡数 {counts}"},
    "note_illustrative_nearest": {
        "en": " (at illustrative reference prices from a public article, not live quotes)",
        "zh": "（示意参考价，取自公开文章，并非实时报价）",
    },
    "nearest_filters": {
        "en": "only {what} {verb} (filtered to {filtered})",
        "zh": "只有{what}{verb}（当前筛选：{filtered}）",
    },
    "nearest_what": {"en": "{places} {gpus}{kinds}", "zh": "{places}的{gpus}{kinds}"},
    "nearest_gpus": {"en": "{gpus} ", "zh": " {gpus} "},
    "nearest_clusters": {"en": "clusters", "zh": "集群"},
    "nearest_offers": {"en": "offers", "zh": "报价"},
    "nearest_hold_model": {"en": "hold this model", "zh": "放得下该模型"},
    "nearest_fit_job": {"en": "fit this job", "zh": "符合条件"},
    "filtered_memory": {"en": "at least {memory} GB per card", "zh": "单卡至少 {memory} GB"},
    "join_or": {"en": "{first}, or {then}", "zh": "{first}，或{then}"},
    "hint_raise_budget": {"en": "raise the budget to {cost}", "zh": "把预算提高到 {cost}"},
    "hint_relax_deadline": {"en": "extend the deadline to {hours} h", "zh": "把期限放宽到 {hours} 小时"},
    "hint_widen_filters": {"en": "widen the filters to include them", "zh": "放宽筛选条件，把它们包括进来"},
    "hint_fewer_cards": {"en": "allow fewer cards", "zh": "减少卡数"},
    "hint_more_cards": {"en": "allow more cards", "zh": "增加卡数"},
    "hint_relax_both": {"en": "raise the budget and extend the deadline", "zh": "提高预算并放宽期限"},
    "hint_allow_cards": {"en": "allow {cards}", "zh": "允许使用 {cards}"},
    "hint_smaller_model": {
        "en": "use a smaller model or a lower precision",
        "zh": "换用更小的模型或更低的精度",
    },
    "reason_memory": {"en": "memory", "zh": "显存"},
    "reason_capacity": {"en": "capacity", "zh": "卡数/库存"},
    "reason_deadline": {"en": "the deadline", "zh": "期限"},
    "reason_budget": {"en": "the budget", "zh": "预算"},
    "reason_stale": {"en": "stale prices", "zh": "价格过期"},
    "reason_filters": {"en": "the filters", "zh": "筛选条件"},
    "hint_memory": {
        "en": "allow more cards or GPUs with more memory",
        "zh": "增加卡数或选择显存更大的 GPU",
    },
    "hint_capacity": {
        "en": "ask for card counts the offers sell (up to one machine, or a cluster for more)",
        "zh": "选择服务商提供的卡数（单机以内，更多卡请选集群）",
    },
    "hint_deadline": {
        "en": "relax the deadline",
        "zh": "放宽期限",
    },
    "hint_budget": {"en": "raise the budget", "zh": "提高预算"},
    "hint_stale": {"en": "refresh the prices", "zh": "刷新价格"},
    "hint_filters": {
        "en": "widen the GPU, region, city, vendor or pricing filters",
        "zh": "放宽 GPU、地区、城市、服务商或计费方式的筛选",
    },
}

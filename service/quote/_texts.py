"""Every sentence and word of prose the engine and the CLI write, in English and Chinese, in one table.

Each message id maps to an ``en`` and a ``zh`` template using the same ``str.format`` fields; numbers
are formatted before they get here (``format_cny``, ``hours_text``) so both languages show the same
figures. Code picks which messages to say, in what order and with which fields; how a language words,
punctuates and joins them lives here (``join_sentences``, ``join_list``), so a rewording is a table edit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from schemas.quote import Lang
from service.quote._money import number_text

__all__ = ["TEMPLATES", "hours_text", "join_text", "number_text", "partial_text", "text"]

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
    "item_data_storage": {
        "en": "storage: {dataset} GB at {price}/GB-day for the job's hours",
        "zh": "存储费：{dataset} GB，{price}/GB·天，按任务时长计",
    },
    "item_data_traffic": {
        "en": "traffic: copying {dataset} GB in from another city at {price}/GB",
        "zh": "流量费：从外地拷入 {dataset} GB，{price}/GB",
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
    "item_mixed_package": {
        "en": "{units} × {period} package ({unit_cards} card(s) each) at {price} × {periods} ({hours} h, {offer})",
        "zh": "{units} 个包{period}套餐（每个 {unit_cards} 卡），{price} × {periods} 期（{hours} 小时，{offer}）",
    },
    "item_mixed_hourly": {
        "en": "then {cards} × {gpu} at {price}/card-hour × {hours} h ({offer})",
        "zh": "其余按卡时：{cards} 张 {gpu}，{price}/卡时 × {hours} 小时（{offer}）",
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
        "en": "the package rents whole machines",
        "zh": "该套餐按整机出租",
    },
    "warn_converted": {
        "en": "hours converted from {reference} to {gpu} at {conversion}: {reference_hours} h on one card "
        "becomes {hours} h{hours_range}",
        "zh": "工时从 {reference} 换算到 {gpu}，按{conversion}：单卡 {reference_hours} 小时折合 {hours} 小时"
        "{hours_range}",
    },
    "conversion_catalog": {
        "en": "{factors}× by {low_source} to {high_source} (pass your measured speed ratio to narrow it)",
        "zh": "{factors} 倍（{low_source}至{high_source}；传入实测速度比可以收窄）",
    },
    "conversion_measured": {"en": "your measured ratio {ratio}×", "zh": "您实测的速度比 {ratio} 倍"},
    "source_pair": {
        "en": "{gpu} {target} over {reference_gpu} {reference}",
        "zh": "{gpu} 的{target}对比 {reference_gpu} 的{reference}",
    },
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
    "warn_scaling_curve": {
        "en": "speed-up {low}–{high}× on {cards} cards for a {communication} job over {interconnect}: "
        "{source} (pass measured points in scaling to replace it)",
        "zh": "{cards} 卡加速比 {low}–{high} 倍（{communication}任务，{interconnect} 互联）：{source}"
        "（可传入实测的加速比替换）",
    },
    "scaling_source_nvlink_light": {
        "en": "NVLink machines keep 0.84–0.98 efficiency on 8 cards (NVIDIA DeepLearningExamples)",
        "zh": "NVLink 机器 8 卡效率 0.84–0.98（NVIDIA DeepLearningExamples 实测）",
    },
    "scaling_source_pcie_heavy": {
        "en": "consumer cards on PCIe without peer-to-peer can fall below 0.5 efficiency on 8 cards "
        "(public measurements)",
        "zh": "无 P2P 的 PCIe 消费级卡 8 卡效率可低于 0.5（公开实测）",
    },
    "scaling_source_fabric_heavy": {
        "en": "the feed names the cluster fabric, not the link inside each machine, so the range spans "
        "PCIe to NVLink machines",
        "zh": "报价只写明集群网络、未写明机内互联，区间覆盖 PCIe 到 NVLink 机型",
    },
    "warn_cross_node": {
        "en": "across nodes over {interconnect}: {factor} of the efficiency kept per doubling of nodes, {why}",
        "zh": "跨节点（{interconnect}）：节点数每翻一倍保留 {factor} 的效率，{why}",
    },
    "factor_derived": {
        "en": "derived from the {operator} baseline for a {communication} job at {bandwidth}× the "
        "InfiniBand communication time (pass your measured cross-node factor to replace it)",
        "zh": "由基准 {operator} 推算：{communication}任务，通信时间为 InfiniBand 的 {bandwidth} 倍"
        "（可传入实测的跨节点系数替换）",
    },
    "factor_caller": {"en": "your measured cross-node factor", "zh": "来自您实测的跨节点系数"},
    "interconnect_infiniband": {"en": "InfiniBand", "zh": "InfiniBand"},
    "interconnect_roce": {"en": "RoCE", "zh": "RoCE"},
    "interconnect_ethernet": {"en": "Ethernet", "zh": "以太网"},
    "interconnect_nvlink": {"en": "NVLink", "zh": "NVLink"},
    "interconnect_pcie": {"en": "PCIe", "zh": "PCIe"},
    "communication_light": {"en": "light-communication", "zh": "通信稀疏的"},
    "communication_moderate": {"en": "moderate-communication", "zh": "通信适中的"},
    "communication_heavy": {"en": "communication-heavy", "zh": "通信密集的"},
    "warn_slower_than_one_machine": {
        "en": "{cards} cards across {nodes} nodes over {interconnect} run slower than {machine_cards} cards "
        "in one machine ({speedup}× against {one_machine}×): a {communication} job waits on the network "
        "more than the extra cards gain",
        "zh": "{nodes} 个节点共 {cards} 张卡（{interconnect}）比单机 {machine_cards} 卡还慢（{speedup} 倍对 "
        "{one_machine} 倍）：{communication}任务等待网络的时间超过了多卡带来的收益",
    },
    "warn_data_copy": {
        "en": "the data is in {data_city}, this offer in {city}: copying {dataset} GB at {mbps} Mbit/s "
        "adds {hours} h (included in the hours), and every read across cities waits on the same line",
        "zh": "数据在 {data_city}，该报价在 {city}：以 {mbps} Mbit/s 拷贝 {dataset} GB 需 {hours} 小时"
        "（已计入时长），跨城读取数据还会有 IO 等待",
    },
    "warn_data_remote": {
        "en": "the data is in {data_city}, this offer in {city}: reading it across cities makes the job "
        "wait on IO; copy it here first (give the dataset's size for the copy time)",
        "zh": "数据在 {data_city}，该报价在 {city}：跨城读取会带来 IO 等待，建议先拷贝到本地"
        "（提供数据集大小可计算拷贝时间）",
    },
    # Response warnings.
    "hint_single_machine": {
        "en": "a communication-heavy job that one machine holds ({need} GB) is safer on a single "
        "machine: across nodes every step waits on the network, so more cards can run slower "
        "(the Shenzhen article: 通信密集的任务，单机反而更稳)",
        "zh": "通信密集且单机能放下模型（{need} GB）的任务，单机更稳：跨节点时每一步都要等网络，"
        "卡多反而可能更慢（深圳文章：通信密集的任务，单机反而更稳）",
    },
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
        "models; say which GPU the hours were measured on to convert them",
        "zh": "各型号（{gpus}）都按相同工时计算，不同型号之间的时间不可比；请说明工时是在哪种 GPU 上测得的，以便换算",
    },
    "warn_cluster_only": {
        "en": "no single machine holds the model ({need} GB at ≤ 90 % of card memory): only cluster "
        "(node-hour) offers qualify, with tensor/pipeline parallelism across nodes",
        "zh": "单台机器放不下该模型（{need} GB，显存占用 ≤ 90%）：只有按节点计费的集群报价符合，需跨节点张量/流水线并行",
    },
    "warn_memory_tight": {
        "en": "the model takes {used} % of the cards' memory ({need} GB on {cards} × {memory} GB), leaving "
        "under 10 % for activations: a larger batch or longer sequences may not fit",
        "zh": "模型占用显存的 {used}%（{need} GB，{cards} 张 {memory} GB 的卡），留给激活值的不到 10%："
        "更大的批量或更长的序列可能放不下",
    },
    "warn_memory_unchecked": {
        "en": "memory fit not checked: give the model's size and, for a batch job, the task",
        "zh": "未检查显存：请提供模型大小；批处理任务还需提供任务类型",
    },
    "warn_value_without_time": {
        "en": "ranking by value needs what an hour of waiting costs you; ranked by cost",
        "zh": "按综合价值排序需要提供每小时等待的成本；已按费用排序",
    },
    # Joining: how a language strings sentences, and list items, together.
    "join_sentences": {"en": "{first} {then}", "zh": "{first}{then}"},
    "join_list": {"en": "{first}, {then}", "zh": "{first}、{then}"},
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
        "about {hours} h{hours_range} for {cost}{cost_range}",
        "zh": "{vendor}（{place}）的 {cards} 张 {gpu}，{pricing}，约 {hours} 小时{hours_range}，费用 {cost}{cost_range}",
    },
    # Summary: its sentences.
    "summary_recommended": {"en": "Recommended: {option}{note}.", "zh": "推荐：{option}{note}。"},
    "note_illustrative": {
        "en": ", at an illustrative reference price from a public article, not a live quote",
        "zh": "（示意参考价，取自公开文章，并非实时报价）",
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
    "table_illustrative_mark": {"en": "*", "zh": "*"},
    "table_illustrative_note": {
        "en": "* illustrative reference price from a public article, not a live quote",
        "zh": "* 示意参考价，取自公开文章，并非实时报价",
    },
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


_SPACE_BETWEEN_HAN = re.compile(
    r"(?<=[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]) (?=[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef])"
)


def text(key: str, lang: Lang, **fields: object) -> str:
    """Message ``key`` in ``lang``, its fields filled in (fields the template does not use are ignored)."""
    filled = TEMPLATES[key][lang].format_map(fields)  # the fields as passed, not unpacked again
    # Chinese sets no space between Chinese words and a Chinese name filled in (数据在苏州, 无锡参考云的).
    return _SPACE_BETWEEN_HAN.sub("", filled) if lang == "zh" else filled


def partial_text(key: str, lang: Lang, open_fields: tuple[str, ...], **fields: object) -> str:
    """Message ``key`` in ``lang`` with ``fields`` filled in and ``open_fields`` left as ``{name}``: a
    template for ``str.format`` that gives what ``text`` would for the same fields, written once for
    sentences repeated with new figures. The Chinese spacing rule is applied here, so an open field must
    not start or end with a Chinese character where the template sets a space beside it (figures never do)."""
    filled: dict[str, object] = {name: "{" + name + "}" for name in open_fields}
    for name, value in fields.items():
        filled[name] = str(value).replace("{", "{{").replace("}", "}}")
    return text(key, lang, **filled)


def join_text(key: str, parts: Iterable[str], lang: Lang) -> str:
    """The non-empty ``parts`` strung together by the join message ``key`` (``join_sentences``,
    ``join_list``); nothing when there are none."""
    joined = ""
    for part in parts:
        if part:
            joined = text(key, lang, first=joined, then=part) if joined else part
    return joined


# Hours read like any other figure: to 0.01 h without trailing zeros (``17.14``).
hours_text = number_text

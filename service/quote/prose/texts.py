"""Every sentence and word of prose the engine and the CLI write, in English and Chinese, in one table.

Each message id maps to an ``en`` and a ``zh`` template using the same ``str.format`` fields; numbers
are formatted before they get here (``format_cny``, ``hours_text``) so both languages show the same
figures. Code picks which messages to say, in what order and with which fields; how a language words,
punctuates and joins them lives here (``join_sentences``, ``join_list``), so a rewording is a table edit.
The summary's messages are kept in ``summary_texts`` and those about risk in ``risk_texts``, merged in
here; the command line's table keeps
its own (``service.cli.texts``), written by the same rules (``text_from``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

import msgspec

from schemas.quote import Lang
from service.quote.base.money import number_text
from service.quote.prose.offer_texts import OFFER_TEMPLATES
from service.quote.prose.risk_texts import RISK_TEMPLATES
from service.quote.prose.summary_texts import SUMMARY_TEMPLATES

__all__ = [
    "TEMPLATES",
    "Message",
    "billed_time_text",
    "hours_text",
    "join_text",
    "number_text",
    "partial_text",
    "said",
    "significant_text",
    "text",
    "text_from",
]

TEMPLATES: dict[str, dict[Lang, str]] = {
    # Names.
    "period_day": {"en": "day", "zh": "日"},
    "period_week": {"en": "week", "zh": "周"},
    "period_month": {"en": "month", "zh": "月"},
    # Line items.
    "item_card_hour": {
        "en": "{cards} × {gpu} at {price}/card-hour × {hours}",
        "zh": "{cards} 张 {gpu}，{price}/卡时 × {hours}",
    },
    "item_minimum": {"en": " (minimum {hours} h billed)", "zh": "（最低计费 {hours} 小时）"},
    "item_node": {
        "en": "{nodes} × {node_cards}-card node at {price}/node-hour × {hours}",
        "zh": "{nodes} 个 {node_cards} 卡节点，{price}/节点时 × {hours}",
    },
    "item_network": {
        "en": "network premium: {nodes} node(s) at {price}/node-hour × {hours}",
        "zh": "网络附加费：{nodes} 个节点，{price}/节点时 × {hours}",
    },
    "item_storage": {
        "en": "storage: {nodes} node(s) at {price}/node-hour × {hours}",
        "zh": "存储费：{nodes} 个节点，{price}/节点时 × {hours}",
    },
    "item_data_storage": {
        "en": "storage: {dataset} GB at {price}/GB-day for the job's hours",
        "zh": "存储费：{dataset} GB，{price}/GB·天，按任务时长计",
    },
    "item_data_copy": {
        "en": "rent while the data copies in ({dataset} GB from {data_city} at {mbps} Mbit/s, {copy} h): "
        "{rate}/hour × {billed}",
        "zh": "等待数据拷入期间的租金（从{data_city}以 {mbps} Mbit/s 拷贝 {dataset} GB，{copy} 小时）："
        "{rate}/小时 × {billed}",
    },
    "item_data_traffic": {
        "en": "traffic: copying {dataset} GB in from another city at {price}/GB",
        "zh": "流量费：从外地拷入 {dataset} GB，{price}/GB",
    },
    "item_bundle": {
        "en": "{bundles} × {bundle_cards}-card bundle at {price}/hour × {hours}",
        "zh": "{bundles} 个 {bundle_cards} 卡套餐，{price}/小时 × {hours}",
    },
    "item_bundle_list": {
        "en": "{cards} × {gpu} at the card-hour price {price}/card-hour ({reference}) × {hours}",
        "zh": "{cards} 张 {gpu} 按卡时价 {price}/卡时（{reference}）× {hours}",
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
        "en": "then {cards} × {gpu} at {price}/card-hour × {hours} ({offer})",
        "zh": "其余按卡时：{cards} 张 {gpu}，{price}/卡时 × {hours}（{offer}）",
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
    "warn_estimated": {
        "en": "hours estimated from the job's size: {flops} FLOPs ({per_token} × {params}B parameters × {tokens} "
        "tokens) at {mfu} of the {gpu}'s peak {tflops} TFLOPS: {hours} h on one card{hours_range}",
        "zh": "工时按任务规模估算：{flops} 次浮点运算（{per_token} × {params}B 参数 × {tokens} 个 token），按 {gpu} "
        "峰值 {tflops} TFLOPS、{mfu}计：单卡 {hours} 小时{hours_range}",
    },
    "mfu_default": {
        "en": "a utilization of {low}–{high} ({expected} expected)",
        "zh": "利用率 {low}–{high}（预期 {expected}）",
    },
    "mfu_caller": {"en": "your measured utilization {mfu}", "zh": "您实测的利用率 {mfu}"},
    "warn_sized": {
        "en": "hours are estimated from the job's FLOPs at {mfu} of each GPU's peak BF16 rate: give "
        "workload.mfu as measured, or gpu_hours, to replace the estimate",
        "zh": "工时是按任务的浮点运算量、各 GPU 峰值 BF16 算力和{mfu}估算的：可传入实测的 workload.mfu 或 "
        "gpu_hours 替换",
    },
    "conversion_catalog": {
        "en": "{factors}× from each card's speed over an RTX 4090: {speeds} (pass your measured speed ratio to "
        "narrow it)",
        "zh": "{factors} 倍（按两者相对 RTX 4090 的速度换算：{speeds}；传入实测速度比可以收窄）",
    },
    "conversion_direct": {
        "en": "{factors}×, the {faster} measured at {low}–{high}× the {slower} (pass your measured speed "
        "ratio to narrow it)",
        "zh": "{factors} 倍（实测 {faster} 为 {slower} 的 {low}–{high} 倍；传入实测速度比可以收窄）",
    },
    "conversion_measured": {"en": "your measured ratio {ratio}×", "zh": "您实测的速度比 {ratio} 倍"},
    "speed_range": {
        "en": "the {gpu} {low}× ({low_kind}) to {high}× ({high_kind})",
        "zh": "{gpu} 为 {low} 倍（{low_kind}）至 {high} 倍（{high_kind}）",
    },
    "speed_point": {"en": "the {gpu} {speed}× ({kind})", "zh": "{gpu} 为 {speed} 倍（{kind}）"},
    "source_measured": {"en": "measured throughput", "zh": "实测吞吐"},
    "source_peak": {"en": "peak compute", "zh": "峰值算力"},
    "source_bandwidth": {"en": "memory bandwidth", "zh": "显存带宽"},
    "source_derived": {"en": "datasheet ratios", "zh": "规格参数推算"},
    "warn_stale": {
        "en": "price fetched {age} ago, older than the {max_age} h limit: confirm it with the vendor",
        "zh": "价格抓取于 {age}前，超过 {max_age} 小时的有效期，请向服务商确认",
    },
    "warn_lead_time": {
        "en": "the cards are ready {lead} h after booking (the vendor's lead time): the job ends about {finish} h "
        "after booking, which is what the deadline counts",
        "zh": "该报价的卡需在预约后 {lead} 小时才就绪（服务商的准备时间）：任务约在预约后 {finish} 小时结束，期限按此计算",
    },
    "warn_deadline": {
        "en": "deadline at risk: up to {hours} h if speed is at the low end{interrupted}, past the {deadline} h "
        "deadline",
        "zh": "可能超出期限：速度偏低{interrupted}时最多需 {hours} 小时，超过 {deadline} 小时的期限",
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
    "warn_split_model": {
        "en": "the model does not fit one {gpu} ({need} GB, at least {min_cards} cards): split across cards, "
        "every step moves weights or activations between them, so it is scaled as a communication-heavy "
        "job (give workload.communication or measured scaling points to replace that)",
        "zh": "单张 {gpu} 放不下该模型（{need} GB，至少 {min_cards} 张卡）：跨卡切分后每一步都要在卡间传递权重"
        "或激活值，因此按通信密集型任务估算加速比（可传入 workload.communication 或实测加速比替换）",
    },
    "note_runs": {
        "en": "independent runs: {rounds} round(s) of {at_once} runs at once, {hours} h each, with no scaling "
        "loss between runs",
        "zh": "独立运行：共 {rounds} 轮，每轮同时运行 {at_once} 个，每轮 {hours} 小时，运行之间没有扩展损耗",
    },
    "note_divides": {
        "en": "independent work divided over {at_once} group(s) of {cards} card(s), with no scaling loss "
        "between them",
        "zh": "独立任务分给 {at_once} 组、每组 {cards} 张卡，组与组之间没有扩展损耗",
    },
    "note_replica_throughput": {
        "en": "each replica of {replica_cards} × {gpu} serves about {per_replica} tokens/s{per_range} at "
        "{concurrency} requests at once ({how}); {replicas} replicas serve about {total} against the "
        "{target} target",
        "zh": "每个副本（{replica_cards} 张 {gpu}）在同时处理 {concurrency} 个请求时约 {per_replica} token/秒"
        "{per_range}（{how}）；{replicas} 个副本约 {total} token/秒，目标 {target}",
    },
    "throughput_estimated": {
        "en": "{bandwidth} TB/s of memory bandwidth over {weights} GB of weights, {low}–{high} of it used; give "
        "workload.replica_tokens_per_s as measured to replace the estimate",
        "zh": "按 {bandwidth} TB/s 显存带宽、{weights} GB 权重、带宽利用 {low}–{high} 估算；可传入实测的 "
        "workload.replica_tokens_per_s 替换",
    },
    "throughput_measured": {"en": "your measured figure", "zh": "您的实测值"},
    "warn_throughput_low": {
        "en": "at the low end of the estimate {replicas} replicas serve {low} tokens/s, under the {target} "
        "target: measure one replica and give workload.replica_tokens_per_s",
        "zh": "按估算的下限，{replicas} 个副本只有 {low} token/秒，低于 {target} 的目标：请实测单个副本并传入 "
        "workload.replica_tokens_per_s",
    },
    "note_growth_fits": {
        "en": "if the work grows {factor}×, this offer carries it on {cards} cards: about {hours} h for {cost}",
        "zh": "若工作量增长到 {factor} 倍，该报价可用 {cards} 张卡承接：约 {hours} 小时，{cost}",
    },
    "warn_growth_short": {
        "en": "if the work grows {factor}×, this offer cannot carry it ({why}): a cluster adds nodes, a single "
        "machine must be replaced",
        "zh": "若工作量增长到 {factor} 倍，该报价承接不了（{why}）：集群可以加节点，单机只能更换",
    },
    "growth_short": {
        "en": "the grown job needs {cards} cards; this offer supplies at most {most}",
        "zh": "增长后的任务需要 {cards} 张卡；该报价最多提供 {most} 张",
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
        "adds {hours} h to the hours, while the rented cards wait; copy the data to {city} before renting "
        "to save that time and its rent, since every read across cities also waits on the same line",
        "zh": "数据在 {data_city}，该报价在 {city}：以 {mbps} Mbit/s 拷贝 {dataset} GB 需 {hours} 小时"
        "（已计入时长），期间租用的显卡只能等待；建议租卡前先把数据拷到{city}，省下这段时间和租金，"
        "跨城读取数据也会有 IO 等待",
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
    "warn_memory_floor": {
        "en": "memory checked only at the least any task needs ({need} GB: {bytes} bytes per parameter, as in "
        "a 4-bit QLoRA or int4 inference); give workload.task for the job's own figure",
        "zh": "显存只按各类任务中最少的需求检查（{need} GB：每个参数 {bytes} 字节，相当于 4 位 QLoRA 或 int4 推理）；"
        "请提供 workload.task 以按实际任务核算",
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
    **SUMMARY_TEMPLATES,
    **RISK_TEMPLATES,
    **OFFER_TEMPLATES,
}


_SPACE_BETWEEN_HAN = re.compile(
    r"(?<=[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]) (?=[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef])"
)


def text(key: str, lang: Lang, **fields: object) -> str:
    """Message ``key`` in ``lang``, its fields filled in (fields the template does not use are ignored)."""
    filled = TEMPLATES[key][lang].format_map(fields)  # the fields as passed, not unpacked again
    # Chinese sets no space between Chinese words and a Chinese name filled in (数据在苏州, 无锡参考云的).
    return _SPACE_BETWEEN_HAN.sub("", filled) if lang == "zh" else filled


def text_from(table: Mapping[str, Mapping[Lang, str]], key: str, lang: Lang, **fields: object) -> str:
    """``text`` from another table of messages written by the same rules (the command line's own)."""
    filled = table[key][lang].format_map(fields)
    return _SPACE_BETWEEN_HAN.sub("", filled) if lang == "zh" else filled


class Message(msgspec.Struct, frozen=True, gc=False):
    """A sentence and the message id it was written from: code that picks among sentences (the summary's
    caveats) reads the id, never the wording, so a rewording never changes which sentence is said. (A
    struct: a response writes dozens, and a struct is made in a sixth of a named tuple's time.)"""

    key: str
    text: str


def said(key: str, lang: Lang, **fields: object) -> Message:
    """``text(key, lang, **fields)`` with its message id."""
    return Message(key, text(key, lang, **fields))


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


_TIME_UNITS: dict[Lang, tuple[str, str, str]] = {"en": ("h", "min", "s"), "zh": ("小时", "分钟", "秒")}


def billed_time_text(hours: float, lang: Lang) -> str:
    """Billed time a line item multiplies by, with its unit: ``43 h`` or ``0.5 h`` when it is a whole
    hundredth of an hour (shown to the hundredth, it multiplies out), else to the second: ``43 min``,
    ``2 h 5 min 12 s`` (per-second billing: 12 cards × ¥1.00 × 43 min is ¥8.60, where 0.72 h is not)."""
    hour, minute, second = _TIME_UNITS[lang]
    hundredths = hours * 100
    if abs(hundredths - round(hundredths)) < 1e-6:
        return f"{number_text(hours)} {hour}"
    whole_h, rest_s = divmod(round(hours * 3600), 3600)
    whole_min, whole_s = divmod(rest_s, 60)
    parts = [
        f"{count:,} {unit}"
        for count, unit in ((whole_h, hour), (whole_min, minute), (whole_s, second))
        if count
    ]
    return " ".join(parts) or f"0 {hour}"


def significant_text(value: float, digits: int = 3) -> str:
    """A figure to ``digits`` significant digits, without trailing zeros: ``0.00095``, ``10.1``, ``1,230``
    (an expected count of interruptions is often far below 0.01, where ``number_text`` shows 0)."""
    if value == 0 or not math.isfinite(value):
        return number_text(value if math.isfinite(value) else 0.0)
    decimals = max(digits - 1 - math.floor(math.log10(abs(value))), 0)
    shown = f"{round(value, decimals):,.{decimals}f}"
    return shown.rstrip("0").rstrip(".") if "." in shown else shown

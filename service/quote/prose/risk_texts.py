"""The messages about risk, in English and Chinese (merged into ``texts.TEMPLATES``): spot capacity,
interruptions and what they cost, and the summary's sentence on the recommendation's risks.

The same rules as the rest of the table: one ``en`` and one ``zh`` template per id, with the same
``str.format`` fields, numbers formatted before they arrive.
"""

from __future__ import annotations

from schemas.quote import Lang

__all__ = ["RISK_TEMPLATES"]

RISK_TEMPLATES: dict[str, dict[Lang, str]] = {
    # A quote's line items and warnings.
    "deadline_interrupted": {"en": " and {count} interruption(s) hit", "zh": "且遇到 {count} 次中断"},
    "item_spot": {"en": "spot / interruptible: ", "zh": "抢占式（可中断）："},
    "warn_spot": {
        "en": "spot / interruptible capacity: the vendor can take the machines back, about {rate} times per "
        "machine-month ({source}); the job then resumes from its last checkpoint",
        "zh": "抢占式（可中断）资源：服务商可以收回机器，约每台机器每月 {rate} 次（{source}）；中断后任务从最近的"
        "检查点恢复",
    },
    "warn_spot_serving": {
        "en": "spot / interruptible capacity: a replica would be down about {share} % of the time (a "
        "{restart}-minute restart each time the vendor takes a machine back, about {rate} times per "
        "machine-month, {source}); {cover}",
        "zh": "抢占式（可中断）资源：每个副本约有 {share}% 的时间不可用（服务商每收回一次机器需重启 {restart} 分钟，"
        "约每台机器每月 {rate} 次，{source}）；{cover}",
    },
    "spot_rate_vendor": {"en": "the vendor's stated rate", "zh": "服务商公布的中断率"},
    "spot_rate_default": {
        "en": "no rate stated: the middle of 0.05–0.2, the range AWS's Spot Instance Advisor puts GPU types in",
        "zh": "服务商未公布中断率：取 0.05–0.2 的中间值，即 AWS Spot Instance Advisor 中 GPU 机型所在的范围",
    },
    "spot_cover_one": {"en": "a second replica covers it", "zh": "再加一个副本即可顶上"},
    "spot_cover_many": {
        "en": "the other replicas cover it while it restarts",
        "zh": "重启期间由其他副本顶上",
    },
    "warn_replica_down": {
        "en": "a replica would be down about {share} % of the time for failing hardware (a {restart}-minute "
        "restart each time)",
        "zh": "因硬件故障，每个副本约有 {share}% 的时间不可用（每次重启 {restart} 分钟）",
    },
    "warn_interruptions": {
        "en": "interruptions: plus about {hours} h for {count} expected interruptions (each loses half the "
        "{interval} h checkpoint interval and a {restart}-minute restart, {per} h); the high end includes {high}",
        "zh": "中断：预计 {count} 次中断，另需约 {hours} 小时（每次损失半个 {interval} 小时的检查点间隔和 {restart} "
        "分钟重启，共 {per} 小时）；上限已计入 {high} 次",
    },
    "note_checkpoint_interval": {
        "en": "with {minutes}-minute checkpoints and an interruption every {between} h, checkpointing about "
        "every {suggested} h loses least (Young/Daly; quoted at every {interval} h)",
        "zh": "每次保存检查点需 {minutes} 分钟、平均每 {between} 小时中断一次时，约每 {suggested} 小时保存一次损失最小"
        "（Young/Daly 公式；报价按每 {interval} 小时计算）",
    },
    # The summary with nothing to quote: spot capacity left out among the filters.
    "filtered_no_spot": {"en": "no spot capacity", "zh": "不用抢占式资源"},
    # The summary: an option on spot capacity, material interruptions beside its figures, the
    # recommendation's risks and the plan without them.
    "pricing_spot": {"en": "spot / interruptible, {pricing}", "zh": "抢占式（可中断），{pricing}"},
    "option_lost": {
        "en": ", plus about {hours} h for {count} expected interruptions,",
        "zh": "，另加约 {hours} 小时应对预计 {count} 次中断",
    },
    "risk_lead": {"en": ", but {risks}", "zh": "，但{risks}"},
    "risk_deadline": {
        "en": "it may miss the {deadline} h deadline (up to {hours} h if speed is at the low end{interrupted})",
        "zh": "可能超出 {deadline} 小时的期限（速度偏低{interrupted}时最多 {hours} 小时）",
    },
    "risk_budget": {
        "en": "it may go over the {budget} budget (up to {cost} at the high end)",
        "zh": "可能超出 {budget} 的预算（最高 {cost}）",
    },
    "risk_spot": {
        "en": "it runs on spot capacity the vendor can take back mid-job",
        "zh": "它使用服务商可中途收回的抢占式资源",
    },
    "risk_spot_serving": {
        "en": "its replicas run on spot capacity the vendor can take back (each would be down about {share} % "
        "of the time; {cover})",
        "zh": "其副本使用服务商可随时收回的抢占式资源（每个副本约有 {share}% 的时间不可用；{cover}）",
    },
    "join_and": {"en": "{first} and {then}", "zh": "{first}，且{then}"},
    "risk_safe_more": {
        "en": "; {cost} more removes the risk: {option}",
        "zh": "；多花 {cost} 即可消除风险：{option}",
    },
    "risk_safe_less": {
        "en": "; a plan without the risk costs {cost} less: {option}",
        "zh": "；没有这一风险的方案反而便宜 {cost}：{option}",
    },
    "risk_safe_same": {
        "en": "; a plan without the risk costs the same: {option}",
        "zh": "；没有这一风险的方案费用相同：{option}",
    },
    "safe_plan": {"en": "the plan without the risk", "zh": "上述无风险的方案"},
    "risk_none_safe": {"en": "; no plan here is free of that risk", "zh": "；这里没有能避开这一风险的方案"},
}

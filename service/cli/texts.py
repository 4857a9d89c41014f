"""The ``gpuquote quote`` table's own words, in English and Chinese, beside the engine's (``service.quote.prose``).

The same rules as the engine's message table: one ``en`` and one ``zh`` template per id with the same
``str.format`` fields, numbers formatted before they arrive.
"""

from __future__ import annotations

from collections.abc import Mapping

from schemas.quote import Lang
from service.quote.prose import text_from

__all__ = ["TABLE_TEMPLATES", "table_text"]

TABLE_TEMPLATES: Mapping[str, Mapping[Lang, str]] = {
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
    "table_warnings": {"en": "warnings {marks}", "zh": "警告 {marks}"},
    "table_quote_warning": {"en": "[{mark}] {warning}", "zh": "[{mark}] {warning}"},
    "table_spot": {"en": "spot", "zh": "抢占式"},
    "table_safe": {"en": "no risk", "zh": "无风险"},
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


def table_text(key: str, lang: Lang, **fields: object) -> str:
    """Message ``key`` of the table in ``lang``, its fields filled in."""
    return text_from(TABLE_TEMPLATES, key, lang, **fields)

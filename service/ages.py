"""How long ago, in words people read: ``12 min``, ``5.5 h``, ``700 days`` (not ``16,801.86 h``).

One rule for every surface that tells a price's age (``GET /vendors``, the MCP ``vendor_status`` tool, the
explorer formats the same steps in the browser): under an hour in minutes, under two days in hours to a
tenth, beyond that in whole days, since nobody acts on the hundredth of an hour of a two-year-old price.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["age_text"]

_MINUTE_S = 60.0
_HOUR_S = 3600.0
_DAY_S = 86_400.0
_HOURS_UP_TO_S = 2 * _DAY_S

_UNITS = {
    "en": {"now": "under a minute", "min": "{n} min", "h": "{n} h", "days": "{n} days"},
    "zh": {"now": "不到 1 分钟", "min": "{n} 分钟", "h": "{n} 小时", "days": "{n} 天"},
}


def _tenths(value: float) -> str:
    shown = f"{round(value, 1):,.1f}"
    return shown.removesuffix(".0")


def age_text(seconds: float, lang: Literal["en", "zh"] = "en") -> str:
    """``seconds`` of age in words, in English or Chinese; a negative age (a clock ahead) is "now"."""
    units = _UNITS[lang]
    if seconds < _MINUTE_S:
        return units["now"]
    if seconds < _HOUR_S:
        return units["min"].format(n=int(seconds // _MINUTE_S))
    if seconds < _HOURS_UP_TO_S:
        return units["h"].format(n=_tenths(seconds / _HOUR_S))
    return units["days"].format(n=f"{int(seconds // _DAY_S):,}")

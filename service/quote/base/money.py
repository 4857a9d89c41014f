"""Rounding at the edge: money half-up to the fen, hours half-up to 0.01 h.

Internally everything is float. Rounding goes through an integer count of fen (or centi-hours) taken as
``floor(x * 100 + 0.5 + tolerance)``: the tolerance absorbs binary noise (``1.005 * 100`` is
``100.49999999999999``; 383.99999999999994 must print as 384.00). A quote's figures and the limits
checked against them are rounded in bulk by ``cents_array``, one formula for both, so a returned quote
never shows a figure past a limit; ``cents`` rounds the single amounts written into text and line items.
The count then becomes the float nearest the decimal figure (JSON numbers), or its exact decimal digits
for text (``format_cny``, ``number_text``), written straight from the integer count: text is written
dozens of times per response, so each is one rounding and one f-string.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["cents", "cents_array", "format_cny", "number_text", "round_cny", "round_hours"]

# A millionth of a cent: far above float noise for any amount below 1e7, far below a real fen.
_TOLERANCE = 1e-6


def cents(value: float) -> int:
    """``value`` in hundredths, rounded half-up (negative amounts round half away from zero)."""
    if value < 0:
        return -cents(-value)
    return math.floor(value * 100 + 0.5 + _TOLERANCE)


def cents_array(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Non-negative values in hundredths, rounded half-up, as floats (NaN stays NaN)."""
    return np.floor(values * 100 + (0.5 + _TOLERANCE))


def round_cny(amount_cny: float) -> float:
    """CNY rounded half-up to the fen: ``round_cny(383.99999999999994) == 384.0``.

    ``cents / 100`` divides two exact integers, so it is the double nearest the decimal amount: the same
    float ``float(Decimal("384.00"))`` gives, without the Decimal detour on the hot path.
    """
    return cents(amount_cny) / 100


def round_hours(hours: float) -> float:
    """Hours rounded half-up to 0.01 h for display: ``round_hours(48 / 2.8) == 17.14``."""
    return cents(hours) / 100


def format_cny(amount_cny: float) -> str:
    """``¥1,234.50``: the amount as a person reads it, rounded like the response (``¥-0.05`` below 0)."""
    count = cents(amount_cny)
    whole, part = divmod(-count if count < 0 else count, 100)
    return f"¥-{whole:,}.{part:02d}" if count < 0 else f"¥{whole:,}.{part:02d}"


def number_text(value: float) -> str:
    """A figure rounded half-up to 0.01 without trailing zeros: ``17.14``, ``16``, ``1,120``, ``0.5``."""
    count = cents(value)
    whole, part = divmod(-count if count < 0 else count, 100)
    sign = "-" if count < 0 else ""
    if part == 0:
        return f"{sign}{whole:,}"
    if part % 10 == 0:
        return f"{sign}{whole:,}.{part // 10}"
    return f"{sign}{whole:,}.{part:02d}"

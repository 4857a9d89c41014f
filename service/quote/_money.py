"""Rounding at the edge: money half-up to the fen, hours half-up to 0.01 h.

Internally everything is float. Rounding goes through an integer count of fen (or centi-hours) taken as
``floor(x * 100 + 0.5 + tolerance)``: the tolerance absorbs binary noise (``1.005 * 100`` is
``100.49999999999999``; 383.99999999999994 must print as 384.00). A quote's figures and the limits
checked against them are rounded in bulk by ``cents_array``, one formula for both, so a returned quote
never shows a figure past a limit; ``cents`` rounds the single amounts written into text and line items.
The count then becomes the float nearest the decimal figure (JSON numbers), or its exact decimal digits
for text (``hundredths_text``).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["cents", "cents_array", "format_cny", "hundredths_text", "round_cny", "round_hours"]

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


def hundredths_text(count: int) -> str:
    """``count`` hundredths as a decimal with thousands separators and two places: ``123450`` is
    ``1,234.50`` (the text ``Decimal(count) / 100`` formats to, in integer arithmetic)."""
    whole, part = divmod(abs(count), 100)
    return f"{'-' if count < 0 else ''}{whole:,}.{part:02d}"


def format_cny(amount_cny: float) -> str:
    """``¥1,234.50``: the amount as a person reads it, rounded like the response."""
    return f"¥{hundredths_text(cents(amount_cny))}"

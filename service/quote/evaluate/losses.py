"""What interrupts a request's candidates, and when judging it reads every candidate's high end."""

from __future__ import annotations

import numpy as np

from schemas.quote import QuoteRequest
from service.quote.base.arrays import FloatArray
from service.quote.evaluate.figures import Figure
from service.quote.evaluate.judge import limit_rows
from service.quote.model.interruptions import SPOT_RATES, LossTerms, spot_rates
from service.quote.model.tables import OfferTables
from service.quote.resolve import ResolvedRequest

__all__ = ["bills_every_high_end", "loss_terms", "reads_every_high_end"]


def bills_every_high_end(request: QuoteRequest) -> bool:
    """Whether the high end is billed for every cell: a confidence asks for it (kept when a limit is
    lifted to find the nearest option, which then shows the figure the limit judges). A limit judged on
    the expected figures reads the high ends of the cells within it alone (``judge``)."""
    return limit_rows(request) != (Figure.HOURS_EXPECTED, Figure.COST_EXPECTED)


def reads_every_high_end(request: QuoteRequest) -> bool:
    """Whether judging the request reads candidates' high ends: a limit (its risk-free plans are told
    apart), or a confidence asking for them (``bills_every_high_end``)."""
    return (
        request.deadline_hours is not None or request.budget_cny is not None or bills_every_high_end(request)
    )


def loss_terms(
    tables: OfferTables,
    resolved: ResolvedRequest,
    gpu_hours_between_failures: float,
    spot_per_month: tuple[float, float, float],
) -> LossTerms:
    """What interrupts the request's candidates (``model.interruptions``) and what each interruption
    adds to the job's hours."""
    any_spot = bool(tables.interruptible.any())
    if any_spot:
        spot = SPOT_RATES.of(tables.memos).get(
            spot_per_month,
            lambda: spot_rates(tables.interruptible, tables.spot_stated_per_month, spot_per_month),
        )
    else:
        spot = _NO_SPOT
    return LossTerms(
        per_card_hour=1 / gpu_hours_between_failures,
        spot_per_hour=spot,
        machine_cards=tables.machine_cards,
        lost_hours=resolved.risk.lost_hours,
        any_spot=any_spot,
    )


_NO_SPOT: FloatArray = np.zeros((3, 0))

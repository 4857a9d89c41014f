"""The low and high ends of some billed cells, billed apart from the expected figure.

Unless a layout bills every bound up front (a small table), an evaluation bills only the expected one
(``evaluate.figures``); the low and high ends are billed here for the cells a response returns
(``bounds_at``), and the high end for every cell when a limit judges it or its risk-free plans are told
apart (``high_everywhere``): element by element, the same arithmetic as the bulk billing, so the same floats.
"""

from __future__ import annotations

import msgspec
import numpy as np

from service.quote.base.arrays import FloatArray, IntArray
from service.quote.evaluate.combined import PricedPlans, bound_costs
from service.quote.evaluate.figures import Figure, unknown_hours
from service.quote.evaluate.hours import CellLosses, bound_hours, wall_clock_hours
from service.quote.evaluate.layout import Layout, LowSpeedups
from service.quote.model.billing import billed_hours
from service.quote.model.interruptions import LossTerms
from service.quote.model.one_card import OneCardHours
from service.quote.model.tables import OfferTables

__all__ = ["BoundTerms", "bounds_at", "high_everywhere"]

_HOURS_BOUNDS = slice(Figure.HOURS_LOW, Figure.HOURS_HIGH + 1, 2)
_COST_BOUNDS = slice(Figure.COST_LOW, Figure.COST_HIGH + 1, 2)


class BoundTerms(msgspec.Struct, frozen=True):
    """What billing the low and high bounds of some cells needs beside the tables (``bounds_at``)."""

    billed: bool  # the layout billed them up front: nothing to bill
    one_card_hours: OneCardHours  # low / expected / high
    extra_hours: FloatArray | None  # (offers,) waiting for data copied from another city
    fees: tuple[FloatArray, FloatArray] | None  # ``fees_per_offer``
    plans: PricedPlans | None  # the combined plans' cells priced (at ``plans.at``, ascending)
    losses: LossTerms | None  # what the high end loses to interruptions; None: nothing (serving)


def bounds_at(
    tables: OfferTables,
    terms: BoundTerms,
    figures: FloatArray,
    cells: IntArray,
    offers: IntArray,
    speedups: tuple[FloatArray, FloatArray],
    cards: FloatArray,
) -> None:
    """Bill the low and high bounds into ``figures`` (``(Figure, cells)``, gathered for some billed
    ``cells`` of ``offers`` at ``cards`` cards, whose high and low speed-ups ``speedups`` are given) as
    ``bill``, ``price_plan_cells`` and ``add_data_fees`` bill the expected one: element by element, the
    same arithmetic, so the same floats."""
    if terms.billed:
        return
    hours = figures[_HOURS_BOUNDS]
    losses = None if terms.losses is None else CellLosses(terms.losses, cards, offers)
    with unknown_hours():
        bound_hours(terms.one_card_hours, offers, speedups, terms.extra_hours, out=hours, losses=losses)
    _bill_bounds(
        tables, terms, figures[_COST_BOUNDS], hours, figures[Figure.HOURLY_RATE_CNY], (cells, offers)
    )


def _bill_bounds(
    tables: OfferTables,
    terms: BoundTerms,
    cost: FloatArray,
    hours: FloatArray,
    hourly_rate: FloatArray,
    cells_of: tuple[IntArray, IntArray],
) -> None:
    """The costs of some bounds' ``hours`` (the cells ``cells_of`` of their offers) into ``cost``, as
    ``bill``, ``price_plan_cells`` and ``add_data_fees`` bill them: billed hours times the rate, a
    combined plan's cheapest combination, the data fees."""
    billed_hours(
        hours, tables.granularity_hours.take(cells_of[1]), tables.min_billed_hours.take(cells_of[1]), out=cost
    )
    cost *= hourly_rate
    _priced_plans(tables, terms, cost, hours, cells_of)
    _add_fees(terms, cost, hours, cells_of[1])


def _priced_plans(
    tables: OfferTables,
    terms: BoundTerms,
    cost: FloatArray,
    hours: FloatArray,
    cells_of: tuple[IntArray, IntArray],
) -> None:
    """Combined plans' bounds in ``cost`` (``(2, cells)`` low and high, or the high alone): the cheapest
    combination for each bound's ``hours``, priced as the expected one is (a plan's cells no response
    reads are not priced, and never quoted)."""
    cells, offers = cells_of
    plans = terms.plans
    plan = np.flatnonzero(offers >= tables.offer_count)
    if plan.size and plans is not None:
        at = np.searchsorted(plans.at, cells[plan])
        priced = at < plans.at.size
        priced[priced] = plans.at[at[priced]] == cells[plan[priced]]
        chosen = plan[priced]
        costs = bound_costs(tables, plans, at[priced], np.atleast_2d(hours)[:, chosen])
        cost[..., chosen] = costs if cost.ndim == 2 else costs[0]


def _add_fees(terms: BoundTerms, cost: FloatArray, hours: FloatArray, offers: IntArray) -> None:
    """A data set's storage over each bound's ``hours`` and its copy's traffic, added to ``cost``."""
    if terms.fees is not None:
        storage_per_hour, traffic = terms.fees
        with unknown_hours():
            cost += storage_per_hour.take(offers) * hours + traffic.take(offers)


def high_everywhere(
    tables: OfferTables, terms: BoundTerms, figures: FloatArray, layout: Layout, low: LowSpeedups
) -> None:
    """The high end's hours and cost of every cell ``layout`` bills into ``figures``, as ``bounds_at``
    bills it for the returned ones (the dense counts' whole rows row by row, then the others cell by cell,
    as ``figures.bill`` lays them out): what a limit judged on the high end, and the plans with no risk
    of passing a limit, read, when the layout did not bill the bounds up front."""
    if terms.billed:
        return
    dense = slice(None, layout.dense * tables.size)
    dense_shape = (layout.dense, tables.size)
    sparse = slice(dense.stop, None)
    offers = layout.cell_offer[sparse]
    hours, cost = figures[Figure.HOURS_HIGH], figures[Figure.COST_HIGH]
    losses = terms.losses
    extra = terms.extra_hours
    with unknown_hours():
        dense_hours = hours[dense].reshape(dense_shape)
        wall_clock_hours(
            terms.one_card_hours.row(2),
            low.dense,
            extra,
            out=dense_hours,
            losses=None if losses is None else CellLosses(losses, layout.cards[: layout.dense, None], None),
        )
        billed_hours(
            dense_hours,
            tables.granularity_hours,
            tables.min_billed_hours,
            out=cost[dense].reshape(dense_shape),
        )
        if offers.size:
            wall_clock_hours(
                terms.one_card_hours.at(2, offers),
                low.sparse,
                None if extra is None else extra.take(offers),
                out=hours[sparse],
                losses=None if losses is None else CellLosses(losses, layout.cell_cards[sparse], offers),
            )
            granularity, minimum = tables.granularity_hours.take(offers), tables.min_billed_hours.take(offers)
            billed_hours(hours[sparse], granularity, minimum, out=cost[sparse])
        cost *= figures[Figure.HOURLY_RATE_CNY]
        _priced_plans(tables, terms, cost, hours, (np.arange(layout.cells.size), layout.cell_offer))
        _add_fees(terms, cost, hours, layout.cell_offer)

"""Combined plans' cells: which a layout prices, and their costs against the products they combine.

A combined plan (``model.plans``) is quoted only where it beats, to the fen at the expected bound, every
product it combines on its own at the same count; ``plan_costs`` prices the cells in bulk.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from service.quote.base.arrays import BoolArray, FloatArray, IntArray
from service.quote.base.money import cents_array
from service.quote.evaluate.plan_costs import PlanCells, cell_terms, plan_costs
from service.quote.model.tables import OfferTables

__all__ = ["PricedPlans", "bound_costs", "plan_cells", "price_kept", "price_plans"]


@dataclass(frozen=True, slots=True)
class PricedPlans:
    """The combined plans' cells a response can read, as indices of a layout's billed cells
    (``_layout``), and what pricing them needs (``plan_cells``): the same for every request of one layout."""

    at: IntArray  # (plan cells,) ascending
    parts_at: IntArray  # (plan cells, 4): the products each plan combines, at the same count
    offers: IntArray  # (plan cells,) their rows
    count_at: IntArray  # (plan cells,) their count columns
    cards: FloatArray  # (plan cells,) their card counts
    slots: IntArray  # (plan cells,) their plans at their counts (``PlanArrays.slots``)
    terms: PlanCells  # the cells, for their expected hours (every bound's: ``bound_costs``)
    pruning: bool  # plan pruning (``FastPaths.plan_pruning``) prices them


def plan_cells(
    tables: OfferTables,
    needed: tuple[IntArray, IntArray],
    cards: FloatArray,
    cells: IntArray,
    *,
    dense_cells: int = 0,
    pruning: bool = True,
) -> PricedPlans:
    """``PricedPlans`` for the needed plan cells, each a count column and a plan (``needed``, in flat
    order, as ``np.nonzero`` gives them); ``cells``: the flat positions of the billed cells (ascending),
    which hold every needed one, the first ``dense_cells`` of them the positions 0, 1, 2, ... (the dense
    counts' whole rows)."""
    count_at, plan_at = needed
    row_base = count_at * tables.size
    offers = tables.offer_count + plan_at
    slots = tables.plan_arrays.slots(plan_at, cards[count_at])
    return PricedPlans(
        at=_indices(cells, dense_cells, row_base + offers),
        parts_at=_indices(cells, dense_cells, row_base[:, None] + tables.plan_arrays.part_rows[plan_at]),
        offers=offers,
        count_at=count_at,
        cards=cards[count_at],
        slots=slots,
        terms=cell_terms(tables.plan_arrays, slots, cards[count_at], pruning=pruning),
        pruning=pruning,
    )


def _indices(cells: IntArray, dense_cells: int, positions: IntArray) -> IntArray:
    """Where each of ``positions`` (all among ``cells``) is in ``cells``: a dense one at its own position,
    the others searched among the cells past the dense ones."""
    at = positions.copy()
    past = positions >= dense_cells
    at[past] = dense_cells + np.searchsorted(cells[dense_cells:], positions[past])
    return at


def price_plans(
    tables: OfferTables, plans: PricedPlans, hours: FloatArray, expected_cost: FloatArray
) -> tuple[BoolArray, FloatArray]:
    """The plan cells' costs at their expected ``hours`` (``(plan cells,)``), and whether each plan is
    cheaper (to the fen) than every product it combines on its own (``expected_cost``: every billed
    cell's). Only the expected cost decides; the low and high ones are priced where they are read
    (``bound_costs``)."""
    costs = plan_costs(tables.plan_arrays, plans.terms, hours)
    return price_kept(plans, costs, expected_cost), costs


def price_kept(plans: PricedPlans, costs: FloatArray, expected_cost: FloatArray) -> BoolArray:
    """Whether each plan cell at its expected ``costs`` is cheaper (to the fen) than every product it
    combines on its own (``expected_cost``: every billed cell's)."""
    # Taken as (4, plan cells): the least of four rows is three element-wise passes, where a least along
    # each cell's four took ten times as long.
    alone = expected_cost.take(plans.parts_at.T).min(axis=0)
    keep: BoolArray = cents_array(costs) < cents_array(alone)
    return keep


def bound_costs(tables: OfferTables, plans: PricedPlans, at: IntArray, hours: FloatArray) -> FloatArray:
    """The costs of the plan cells ``at`` (indices among ``plans``' cells) at ``hours`` (``(bounds,
    len(at))``: one row per bound priced), each cell as ``price_plans`` prices it (the arithmetic is cell
    by cell, so the same floats whichever cells are priced with it)."""
    bounds = hours.shape[0]
    terms = cell_terms(
        tables.plan_arrays,
        np.tile(plans.slots.take(at), bounds),
        np.tile(plans.cards.take(at), bounds),
        pruning=plans.pruning,
    )
    costs: FloatArray = plan_costs(tables.plan_arrays, terms, hours.ravel()).reshape(hours.shape)
    return costs

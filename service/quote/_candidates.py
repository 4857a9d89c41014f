"""Which card counts each row is quoted at when a request names none, and the combined plans' prices.

Without ``card_counts`` every row is quoted at every count it sells (``_billing.sold_counts``) up to the
operator's cap (``QuoteOptions.max_plan_cards``), and, with a deadline, at the fewest cards that meet it
by the expected hours (``_deadline``). The evaluation still runs as one (counts × rows) block over the
union of those counts; ``requested`` marks the candidates each row sells, so a count an offer never
sells (16 cards of an 8-card machine) is neither quoted nor counted as excluded.

A serving job (``serving_layout``, ``serving_units``) is placed replica by replica. Each replica takes
its memory minimum rounded up to a tensor-parallel size serving frameworks run: a power of two (1, 2, 4,
8) within a machine, else whole machines. Replicas run independently, so each machine holds
⌊machine cards / cards per replica⌋ whole replicas and as many machines (rentals of the same offer) as
needed are taken, each billed as the offer bills the cards it uses (per card, or the whole machine,
package, bundle or node). A cluster offer (nodes rented at least two at a time) is used only when one
replica needs more than a machine, one rental per replica: tensor parallel across nodes serves worse
than replicas on separate machines. Placement is per offer: mixing two offers (two replicas on one
vendor's hourly cards, one on another's monthly package) is not quoted. A combined plan row is placed
the same way and priced by ``price_plans`` at the total cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from service.quote._arrays import BoolArray, FloatArray, IntArray
from service.quote._money import cents_array
from service.quote._plan_pricing import PlanCells, cell_terms, plan_costs
from service.quote._tables import OfferTables

__all__ = [
    "PricedPlans",
    "ServingLayout",
    "plan_candidates",
    "plan_cells",
    "price_plans",
    "serving_candidates",
    "serving_layout",
]


def plan_candidates(
    tables: OfferTables, base_counts: Sequence[int], max_cards: int, deadline_cards: IntArray | None
) -> tuple[tuple[int, ...], BoolArray]:
    """The counts to evaluate and which (count, row) candidates are quoted, for a request without counts."""
    sold_rows = [at for at, cards in enumerate(tables.plan_counts) if cards <= max_cards]
    extra = set() if deadline_cards is None else set(deadline_cards[deadline_cards > 0].tolist())
    counts = tuple(sorted({*base_counts, *(tables.plan_counts[at] for at in sold_rows), *extra}))
    position = {cards: at for at, cards in enumerate(counts)}
    requested = np.zeros((len(counts), tables.size), dtype=np.bool_)
    requested[[position[tables.plan_counts[at]] for at in sold_rows]] = tables.sells[sold_rows]
    if deadline_cards is not None:
        rows = np.flatnonzero(deadline_cards)
        requested[np.searchsorted(counts, deadline_cards[rows]), rows] = True
    return counts, requested


@dataclass(frozen=True, slots=True)
class PricedPlans:
    """The combined plans' cells a response can read, as indices of a layout's billed cells
    (``_layout``), and what pricing them needs (``plan_cells``): the same for every request of one layout."""

    at: IntArray  # (plan cells,) ascending
    parts_at: IntArray  # (plan cells, 4): the products each plan combines, at the same count
    offers: IntArray  # (plan cells,) their rows
    speedup_at: IntArray  # (plan cells,) their flat positions in a (counts, speed-up columns) table
    terms: PlanCells  # the cells once per priced bound, bound by bound (low, expected, high)


def plan_cells(tables: OfferTables, needed: BoolArray, cards: FloatArray, cells: IntArray) -> PricedPlans:
    """``PricedPlans`` for the plan cells ``needed`` marks (``(counts, rows)``); ``cells``: the flat
    positions of the billed cells (ascending), which hold every needed one."""
    count_at, plan_at = np.nonzero(needed[:, tables.offer_count :])
    row_base = count_at * tables.size
    offers = tables.offer_count + plan_at
    return PricedPlans(
        at=np.searchsorted(cells, row_base + offers),
        parts_at=np.searchsorted(cells, row_base[:, None] + tables.plan_arrays.part_rows[plan_at]),
        offers=offers,
        speedup_at=count_at * len(tables.scaling_keys) + tables.scaling_code[offers],
        terms=cell_terms(tables.plan_arrays, np.tile(plan_at, 3), np.tile(cards[count_at], 3)),
    )


def price_plans(
    tables: OfferTables, plans: PricedPlans, hours: FloatArray, expected_cost: FloatArray
) -> tuple[BoolArray, FloatArray]:
    """The plan cells' costs at each bound's ``hours`` (``(3, plan cells)``: low / expected / high), and
    whether each plan is cheaper (to the fen, expected) than every product it combines on its own
    (``expected_cost``: every billed cell's)."""
    costs = plan_costs(tables.plan_arrays, plans.terms, hours.ravel()).reshape(hours.shape)
    alone = expected_cost.take(plans.parts_at).min(axis=1)
    keep: BoolArray = cents_array(costs[1]) < cents_array(alone)
    return keep, costs


@dataclass(frozen=True, slots=True)
class ServingLayout:
    """Per row ``(rows,)``: the cards one replica takes, and whether the offer can host a replica."""

    replica_cards: FloatArray
    hosts: BoolArray
    within_machine: BoolArray  # a replica fits one machine (else it spans whole nodes of a cluster)


def serving_layout(tables: OfferTables, fewest_cards: FloatArray) -> ServingLayout:
    """Each row's cards per replica: the memory minimum up to a power of two within a machine, else up to
    whole machines (only where the offer rents nodes across machines)."""
    machine = tables.machine_cards
    power_of_two = 2.0 ** np.ceil(np.log2(np.maximum(fewest_cards, 1.0)))
    within = power_of_two <= machine
    whole_machines = np.ceil(fewest_cards / machine) * machine
    cluster = tables.spans_machines & (tables.min_units > 1)
    hosts = np.where(within, ~cluster, tables.spans_machines)
    return ServingLayout(
        replica_cards=np.where(within, power_of_two, whole_machines), hosts=hosts, within_machine=within
    )


def _rented(tables: OfferTables, cards: FloatArray) -> FloatArray:
    """Units one rental of ``cards`` bills: whole units, at least the offer's minimum."""
    units: FloatArray = np.maximum(tables.min_units, np.ceil(cards / tables.unit_cards))
    return units


def serving_units(
    tables: OfferTables, layout: ServingLayout, counts: FloatArray
) -> tuple[FloatArray, BoolArray]:
    """``(counts, rows)``: units billed for ``counts`` cards of whole replicas, and whether they can be
    placed (a whole number of replicas, each rental within the offer's limits, within its stock).

    Within a machine, ``per_machine`` replicas fill each machine and the rest share one more; beyond a
    machine, each replica is its own rental of whole nodes. Counts that are not whole replicas keep the
    plain rule's units (they are never quoted).
    """
    cards = counts[:, None]
    per_replica = layout.replica_cards
    replicas = cards / per_replica
    whole = (replicas == np.floor(replicas)) & (replicas >= 1) & layout.hosts
    per_machine = np.maximum(np.floor(tables.machine_cards / per_replica), 1.0)
    full_machines = np.floor(replicas / per_machine)
    rest = replicas - full_machines * per_machine
    full_units = _rented(tables, per_machine * per_replica)
    rest_units = np.where(rest > 0, _rented(tables, np.maximum(rest, 1.0) * per_replica), 0.0)
    one_replica_units = _rented(tables, per_replica)
    placed_units = np.where(
        layout.within_machine, full_machines * full_units + rest_units, replicas * one_replica_units
    )
    rental_units = np.where(layout.within_machine, full_units, one_replica_units)
    units = np.where(whole, placed_units, _rented(tables, np.broadcast_to(cards, placed_units.shape)))
    placed = (
        whole & (rental_units <= tables.max_units) & (units * tables.unit_cards <= tables.available_cards)
    )
    return units, placed


def serving_candidates(
    tables: OfferTables,
    fewest_cards: FloatArray,
    replicas: int,
    card_counts: Sequence[int] | None,
    matching: BoolArray,
) -> tuple[tuple[int, ...], BoolArray, FloatArray, BoolArray]:
    """The counts to evaluate for a serving job, which (count, row) candidates are quoted, and each
    candidate's units and whether it can be placed (``serving_units``).

    Without ``card_counts``: each row at exactly ``replicas`` replicas. With them: each given total that
    is a whole number of the row's replicas, at least ``replicas`` of them (more serve more traffic).
    """
    layout = serving_layout(tables, fewest_cards)
    least = replicas * layout.replica_cards
    if card_counts is None:
        given = {int(cards) for cards in least[matching & layout.hosts].tolist()}
    else:
        given = set(card_counts)
    counts = tuple(sorted({1, *given}))
    cards = np.array(counts, dtype=np.float64)[:, None]
    requested = (cards % layout.replica_cards == 0) & (cards >= least) & layout.hosts
    if card_counts is None:
        requested &= cards == least
    units, placed = serving_units(tables, layout, cards[:, 0])
    return counts, requested, units, placed

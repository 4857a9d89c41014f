"""Combined plans: one vendor's term packages in whole periods, plus its card-hour price for the rest.

800 h on one card at a vendor selling a month (720 h) for ¥4,260 and card-hours at ¥8: all hourly is
¥6,400, two months ¥8,520, one month plus 80 h ¥4,900. A ``MixedPlan`` joins the products of one vendor,
city, GPU and package size (per card, or per machine of N cards): the packages of each period length
(the cheapest per period) and the vendor's cheapest card-hour offer for the GPU, when there are at
least two of them. Spot offers join no plan: a plan holds the job's hours at the packages' terms, and
spot capacity can be taken back before they are used. It is quoted under its longest-period package's offer (``MixedPlan.offer_row``);
the line items name every part.

A vendor selling packages of several unit sizes for one GPU (a whole machine's month and a card's day)
has one plan row (``PlanRow``) priced per count: for ``n`` cards within the machine, a plan in units of
``n`` cards, each package at what renting it for ``n`` cards costs (one machine, or ``n`` card packages).
4,000 card-hours on 8 × 4090 in 800 h: one machine month (¥24,900) plus 3 days × 8 cards (¥2,592) plus 8 h
× 8 cards at ¥5 (¥320) = ¥27,812, against ¥28,100 for the month plus 80 h of card-hours.

The cheapest combination for ``h`` wall-clock hours on ``n`` cards is found exactly:

    cost = units × Σ k_p × period price_p  +  n × card-hour price × billed(h − Σ k_p × period hours_p)

(``units`` = n per-card packages, or one machine package; the hourly part is rounded up to its
granularity and at least its minimum, and is nothing when the packages cover the hours.)

- Rank the packages by price per hour (cheaper first, the longer period first on a tie); ``b`` is the
  first. Swapping ``lcm(L_p, L_q) / L_p`` packages of a worse-ranked p for ``lcm / L_q`` of a better q
  covers the same hours for no more money, so some cheapest combination holds fewer than that many of
  each worse package (fewer than 7 days beside weeks, 30 days or 30 weeks beside months). Those finite
  combinations are listed once per snapshot (``combos``).
- For each listed combination, ``k_b`` is one of four: 0, the most that leaves at least the hourly
  minimum to bill (``k1``), ``k1 + 1``, and enough to cover every hour (``kc``). Between 0 and ``k1``
  the cost is linear in ``k_b`` (each package replaces exactly ``L_b`` billed hours, since a plan is
  only built when every period is a whole number of hourly granules), so an end is cheapest; past
  ``k1`` the hourly part is its minimum until ``kc`` leaves none.

So "all hourly" (every k 0) and "all packages" (``kc`` whole periods) are among the candidates, and the
minimum over them is the true minimum. Each bound of a range (low / expected / high) is priced on its
own hours.

This module builds the plans and their flat arrays once per snapshot (``PlanArrays``) and prices one
candidate for its line items (``cheapest_combination``); ``_plan_pricing`` prices many cells at once with
the same arithmetic.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from schemas.offer import PERIOD_HOURS, Offer, TermPeriod
from service.quote.base.arrays import FloatArray, IntArray
from service.quote.model.billing import BILLING_TOLERANCE, BillingTerms, billed_hours_of, whole_granules_of
from service.quote.model.pricing import CardHourRate, rule_of

__all__ = [
    "PAIR_KEY_SPAN",
    "Combination",
    "MixedPlan",
    "PairTerm",
    "PlanArrays",
    "PlanRow",
    "build_plans",
    "cheapest_combination",
]


@dataclass(frozen=True, slots=True)
class Package:
    row: int  # the term offer's index among the snapshot's offers
    period: TermPeriod
    period_hours: float
    cny_per_period: float  # per unit of the plan (``MixedPlan.unit_cards``)
    unit_cards: int = 1  # cards per package the vendor sells: 1, or a machine's
    units: int = 1  # packages per unit of the plan: a plan of 3 cards rents 3 card packages or 1 machine

    @property
    def vendor_cny_per_period(self) -> float:
        """The vendor's price of one package for one period."""
        return self.cny_per_period / self.units


@dataclass(frozen=True, slots=True)
class MixedPlan:
    packages: tuple[Package, ...]  # longest period first
    unit_cards: int  # cards per package unit: 1, or the machine's cards
    hourly_row: int | None  # the card-hour offer's index
    cny_per_card_hour: float  # 0 without a card-hour offer
    granularity_hours: float
    min_billed_hours: float
    best: int  # index in ``packages`` of the cheapest per hour
    combos: tuple[tuple[int, ...], ...]  # package counts beside the best's (whose count is 0 here)

    @property
    def offer_row(self) -> int:
        """The offer the plan is quoted under: its longest-period package."""
        return self.packages[0].row

    @property
    def best_row(self) -> int:
        return self.packages[self.best].row

    @property
    def rows(self) -> tuple[int, ...]:
        """Every offer the plan combines."""
        hourly = () if self.hourly_row is None else (self.hourly_row,)
        return (*(package.row for package in self.packages), *hourly)


@dataclass(frozen=True, slots=True)
class PlanRow:
    """A combined plan's row in the tables: the plan each card count is priced by.

    One plan for every count when the packages are of one unit size; with packages of several sizes, one
    plan per count from 1 to the machine's cards (``plans[n - 1]``), each in units of ``n`` cards.
    """

    plans: tuple[MixedPlan, ...]
    offer_row: int  # the offer the row is quoted under: its longest-period package (the larger unit first)
    rows: tuple[int, ...]  # every offer the row combines

    def at(self, cards: int) -> MixedPlan:
        """The plan ``cards`` cards are priced by."""
        return self.plans[min(cards, len(self.plans)) - 1]


class PairTerm(IntEnum):
    """Rows of ``PlanArrays.terms``: one listed combination's figures and its plan's terms."""

    COVERED_HOURS = 0  # hours the combination's non-best packages cover (whole hours)
    COVERED_COST = 1  # what they cost per unit
    BEST_HOURS = 2  # period hours of the plan's best package
    BEST_COST = 3
    RATE = 4  # card-hour price, 0 without one
    GRANULARITY_HOURS = 5
    MIN_BILLED_HOURS = 6
    UNIT_CARDS = 7


def _is_whole_granules(period_hours: float, granularity_hours: float) -> bool:
    granules = period_hours / granularity_hours
    return abs(granules - round(granules)) < 1e-9


def _combos(packages: Sequence[Package], best: int, ranked: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Counts of the non-best packages some cheapest combination stays within (see the module doc)."""
    limits = []
    for index, package in enumerate(packages):
        if index == best:
            limits.append(1)
            continue
        hours = int(package.period_hours)
        better = ranked[: ranked.index(index)]
        limits.append(min(math.lcm(hours, int(packages[other].period_hours)) // hours for other in better))
    return tuple(itertools.product(*(range(limit) for limit in limits)))


def _plan(
    packages: list[Package], hourly: tuple[int, CardHourRate] | None, unit_cards: int, *, parts: int = 2
) -> MixedPlan | None:
    """The plan of ``packages`` and ``hourly`` in units of ``unit_cards``, when it has at least ``parts``."""
    if hourly is not None and not all(
        _is_whole_granules(package.period_hours, hourly[1].granularity_hours) for package in packages
    ):
        hourly = None  # a period that is no whole number of granules breaks the exact search
    if not packages or len(packages) + (hourly is not None) < parts:
        return None
    packages.sort(key=lambda package: (-package.period_hours, -package.unit_cards))
    ranked = sorted(
        range(len(packages)),
        key=lambda i: (packages[i].cny_per_period / packages[i].period_hours, -packages[i].period_hours),
    )
    best = ranked[0]
    return MixedPlan(
        packages=tuple(packages),
        unit_cards=unit_cards,
        hourly_row=None if hourly is None else hourly[0],
        cny_per_card_hour=0.0 if hourly is None else hourly[1].cny_per_card_hour,
        granularity_hours=1.0 if hourly is None else hourly[1].granularity_hours,
        min_billed_hours=0.0 if hourly is None else hourly[1].min_billed_hours,
        best=best,
        combos=_combos(packages, best, ranked),
    )


def _per_count_row(
    chosen: list[Package], hourly: tuple[int, CardHourRate] | None, terms: Sequence[BillingTerms]
) -> PlanRow | None:
    """One plan per count for packages of several unit sizes: ``n`` cards rent ``ceil(n / size)`` of each."""
    rows = (*(package.row for package in chosen), *(() if hourly is None else (hourly[0],)))
    most_cards = min(terms[row].machine_cards for row in rows)
    plans = []
    for cards in range(1, most_cards + 1):
        at_count = [
            Package(
                row=package.row,
                period=package.period,
                period_hours=package.period_hours,
                cny_per_period=-(-cards // package.unit_cards) * package.cny_per_period,
                unit_cards=package.unit_cards,
                units=-(-cards // package.unit_cards),
            )
            for package in chosen
        ]
        plan = _plan(at_count, hourly, unit_cards=cards, parts=1)
        if plan is None:
            return None
        plans.append(plan)
    if not plans:
        return None
    longest = plans[-1].offer_row
    return PlanRow(plans=tuple(plans), offer_row=longest, rows=tuple(sorted(rows)))


def build_plans(
    offers: Sequence[Offer], terms: Sequence[BillingTerms], rates: Sequence[CardHourRate | None]
) -> tuple[PlanRow, ...]:
    """Every combined plan row the offers allow, in a stable order (once per snapshot); ``terms``: each
    offer's billing terms, ``rates``: its card-hour rate (its rule's ``card_hour_rate``)."""
    packages: dict[tuple[str, str, str], dict[tuple[int, TermPeriod], tuple[float, str, int]]] = {}
    hourly: dict[tuple[str, str, str], tuple[float, str, int, CardHourRate]] = {}
    for index, (offer, rate) in enumerate(zip(offers, rates, strict=True)):
        if offer.spot:
            continue  # a plan holds its hours at the package's terms; spot capacity may be taken back
        place = (offer.vendor, offer.city, offer.gpu)
        prepaid = rule_of(offer.pricing).package(offer.pricing)
        if prepaid is not None:
            periods = packages.setdefault(place, {})
            candidate = (prepaid.cny_per_period, offer.id, index)
            product = (prepaid.cards, prepaid.period)
            if product not in periods or candidate < periods[product]:
                periods[product] = candidate
        elif rate is not None:
            cheaper = (rate.cny_per_card_hour, offer.id, index, rate)
            if place not in hourly or cheaper[:3] < hourly[place][:3]:
                hourly[place] = cheaper
    rows = []
    for place in sorted(packages):
        card_hour = hourly.get(place)
        card_hour_offer = None if card_hour is None else (card_hour[2], card_hour[3])
        sizes = sorted({cards for cards, _ in packages[place]})
        chosen = [
            Package(
                row=index,
                period=period,
                period_hours=PERIOD_HOURS[period],
                cny_per_period=price,
                unit_cards=cards,
            )
            for (cards, period), (price, _, index) in sorted(packages[place].items())
        ]
        if len(sizes) > 1:
            row = _per_count_row(chosen, card_hour_offer, terms)
        else:
            plan = _plan(chosen, card_hour_offer, unit_cards=sizes[0])
            row = None if plan is None else PlanRow(plans=(plan,), offer_row=plan.offer_row, rows=plan.rows)
        if row is not None:
            rows.append(row)
    return tuple(rows)


# Keys ``plan × span + whole hours`` stay exact floats and never reach the next plan's (a job's hours
# are capped at 2**31 in them, far past any combination's: ``_plan_pricing``).
PAIR_KEY_SPAN = float(2**32)


@dataclass(frozen=True, slots=True)
class PlanArrays:
    """Every plan's listed combinations as flat ``(pairs,)`` arrays, each with its plan's terms, plans
    contiguous (``starts``), for bulk pricing. The plans are every row's, row after row (``row_first``:
    each row's first plan, ``row_plans``: how many it has, one per count or one for all); ``slots`` gives
    the plan of a row at a count."""

    starts: IntArray  # (plans,) first pair of each plan; a plan's pairs by covered hours, ascending
    pair_plan: IntArray  # (pairs,) the plan of each pair
    terms: FloatArray  # (PairTerm, pairs): gathered for many candidates in one take
    has_hourly: npt.NDArray[np.bool_]
    every_hourly: bool  # every plan has a card-hour offer
    part_rows: IntArray  # (plans, 4) the offers each plan combines (repeated to fill the row)
    pair_key: FloatArray  # plan × PAIR_KEY_SPAN + covered hours: ascending over every pair
    # Per plan, ``size + 1`` entries from ``starts + plan``: the cheapest pair cost from each pair to the
    # plan's last (the combinations that cover at least as many hours), then +inf.
    cover_cost: FloatArray
    plan_unit_cards: FloatArray  # (plans,)
    row_first: IntArray  # (rows,)
    row_plans: IntArray  # (rows,)

    def slots(self, plan_rows: IntArray, cards: FloatArray) -> IntArray:
        """The plan of each of ``plan_rows`` (indices of ``PlanRow``) at ``cards`` (``PlanRow.at``)."""
        slots: IntArray = self.row_first[plan_rows] + np.minimum(cards, self.row_plans[plan_rows]).astype(
            np.int64
        )
        slots -= 1
        return slots

    @classmethod
    def build(cls, rows: Sequence[PlanRow]) -> PlanArrays:
        plans = [plan for row in rows for plan in row.plans]
        listed = [_listed(plan) for plan in plans]
        sizes = [hours.size for hours, _, _ in listed]
        pair_plan = np.repeat(np.arange(len(plans)), sizes)
        pair_hours = np.concatenate([hours for hours, _, _ in listed]) if listed else np.empty(0)
        has_hourly = np.repeat(
            np.array([plan.hourly_row is not None for plan in plans], dtype=np.bool_), sizes
        )
        width = max((len(row.rows) for row in rows), default=1)
        return cls(
            starts=(np.cumsum([0, *sizes])[:-1]).astype(np.int64),
            pair_plan=pair_plan,
            terms=np.concatenate([terms for _, _, terms in listed], axis=1)
            if listed
            else np.empty((len(PairTerm), 0)),
            has_hourly=has_hourly,
            every_hourly=bool(has_hourly.all()),
            part_rows=np.array(
                [[row.rows[min(i, len(row.rows) - 1)] for i in range(width)] for row in rows], dtype=np.int64
            ).reshape(len(rows), width),
            pair_key=pair_plan * PAIR_KEY_SPAN + pair_hours,
            cover_cost=np.concatenate([cover for _, cover, _ in listed]) if listed else np.empty(0),
            plan_unit_cards=np.array([plan.unit_cards for plan in plans], dtype=np.float64),
            row_first=np.cumsum([0, *(len(row.plans) for row in rows)])[:-1].astype(np.int64),
            row_plans=np.array([len(row.plans) for row in rows], dtype=np.int64),
        )


def _listed(plan: MixedPlan) -> tuple[FloatArray, FloatArray, FloatArray]:
    """A plan's combinations by the hours they cover (ascending; as listed where equal): those hours, the
    least cost of covering at least each (and +inf past the last: one more entry), and their
    ``PairTerm`` rows. Worked out a package at a time over every combination, in ``_covered``'s order of
    operations, so the same floats (a combination at a time: 138 ms of plan tables at 96,000 offers, 32
    ms so)."""
    counts = np.array(plan.combos, dtype=np.float64).reshape(len(plan.combos), len(plan.packages))
    hours, cost = np.zeros(len(plan.combos)), np.zeros(len(plan.combos))
    for at, package in enumerate(plan.packages):
        hours = hours + counts[:, at] * package.period_hours
        cost = cost + counts[:, at] * package.cny_per_period
    order = np.argsort(hours, kind="stable")
    hours, cost = hours.take(order), cost.take(order)
    assert bool((hours == np.floor(hours)).all())  # whole periods of whole hours
    cover = np.append(np.minimum.accumulate(cost[::-1])[::-1], math.inf)
    best = plan.packages[plan.best]
    constants = (
        best.period_hours,
        best.cny_per_period,
        plan.cny_per_card_hour,
        plan.granularity_hours,
        plan.min_billed_hours,
        plan.unit_cards,
    )
    terms = np.empty((len(PairTerm), hours.size))
    terms[0], terms[1] = hours, cost
    terms[2:] = np.array(constants, dtype=np.float64)[:, None]
    return hours, cover, terms


def _covered(plan: MixedPlan, counts: Sequence[int]) -> tuple[float, float]:
    """Hours and cost per unit of ``counts`` packages (one number per ``plan.packages``)."""
    hours = sum(k * package.period_hours for k, package in zip(counts, plan.packages, strict=True))
    cost = sum(k * package.cny_per_period for k, package in zip(counts, plan.packages, strict=True))
    return float(hours), float(cost)


@dataclass(frozen=True, slots=True)
class Combination:
    """The cheapest combination for one plan, cards and hours: what the line items show."""

    package_counts: tuple[int, ...]  # per ``MixedPlan.packages``
    units: int
    card_hours_billed: float  # hours billed at the card-hour price (each of the cards)
    cost_cny: float
    billed_cards: int  # the most cards any part bills: a machine package's whole machine, or the cards

    def billed_hours(self, plan: MixedPlan) -> float:
        return _covered(plan, self.package_counts)[0] + self.card_hours_billed


def cheapest_combination(plan: MixedPlan, cards: int, hours: float) -> Combination:
    """The combination ``plan_costs`` prices, for one candidate (the returned quotes' line items): the
    same float arithmetic, one candidate at a time; on a tie, the one with fewer parts."""
    best = plan.packages[plan.best]
    length, price = best.period_hours, best.cny_per_period
    granularity, minimum, rate = plan.granularity_hours, plan.min_billed_hours, plan.cny_per_card_hour
    units = math.ceil(cards / plan.unit_cards)
    chosen: tuple[float, int, Combination] | None = None
    for combo in plan.combos:
        covered_hours, covered_cost = _covered(plan, combo)
        rest = hours - covered_hours
        covering = max(whole_granules_of(rest, length), 0.0)
        most = min(max(float(math.floor((rest - minimum) / length)), 0.0), covering)
        options = (
            (0.0, most, min(most + 1, covering), covering) if plan.hourly_row is not None else (covering,)
        )
        for count in options:
            left = rest - count * length
            billed = 0.0
            if left > BILLING_TOLERANCE * granularity:
                billed = billed_hours_of(max(left, 0.0), granularity, minimum)
            cost = float(units) * (covered_cost + count * price) + float(cards) * rate * billed
            counts = list(combo)
            counts[plan.best] = int(count)
            parts = sum(1 for k in counts if k) + (billed > 0)
            if chosen is None or (cost, parts) < chosen[:2]:
                billed_cards = max(
                    (
                        units * package.units * package.unit_cards
                        for package, k in zip(plan.packages, counts, strict=True)
                        if k
                    ),
                    default=cards,
                )
                billed_cards = max(billed_cards, cards) if billed > 0 else billed_cards
                chosen = (cost, parts, Combination(tuple(counts), units, billed, cost, billed_cards))
    assert chosen is not None  # every plan lists at least the empty combination
    return chosen[2]

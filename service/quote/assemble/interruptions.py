"""A returned quote's interruptions: what it expects, what they cost, and the warnings that say so.

Every quote carries ``Interruptions`` (``schemas.quote``): the expected count from failing hardware and,
on spot capacity, from the vendor taking machines back (``model.interruptions``), over the hours the cards
compute; the hours and money they cost, as their own expected figures; the bad-luck count its high end
includes (``assemble.figures``). A serving quote's replicas are down for a restart each time instead,
``replica_down_share`` of the time, and its hours are never extended.

Warnings, in this order, each only when it applies:

- spot capacity: how often the vendor takes a machine back and where the rate comes from (the vendor's
  feed, or the default range's source); for serving, the share of time a replica is down and that
  another replica covers it;
- interruptions that cost 1 % of the job's hours or more: the hours next to the count ("plus about
  15 h for 20 expected interruptions"), what each costs, and how many the high end includes;
- with ``workload.checkpoint_minutes``: the checkpoint interval that loses least (Young/Daly).
"""

from __future__ import annotations

import math

import msgspec

from schemas.quote import Interruptions
from service.quote.assemble.context import QuoteContext
from service.quote.assemble.figures import QuoteFigures
from service.quote.base.money import round_cny, round_hours
from service.quote.model.interruptions import HOURS_PER_MONTH, young_daly_interval_h
from service.quote.prose.texts import Message, hours_text, number_text, said, significant_text

__all__ = ["MATERIAL_SHARE", "QuoteInterruptions", "quote_interruptions"]

MATERIAL_SHARE = 0.01
"""Interruptions that cost at least this share of a job's hours are told next to its figures."""

# The share of time a serving replica is down that is worth a warning on capacity that is not spot.
_DOWN_SHARE_TOLD = 0.001


def _significant(value: float, digits: int = 3) -> float:
    """``value`` to ``digits`` significant digits (0 stays 0): counts as small as 0.001 stay readable."""
    if value == 0 or not math.isfinite(value):
        return 0.0 if not math.isfinite(value) else value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


class QuoteInterruptions(msgspec.Struct, frozen=True, gc=False):
    """A quote's ``Interruptions`` and the warnings about them."""

    figures: Interruptions
    warnings: list[Message]


def quote_interruptions(
    context: QuoteContext, index: int, cards: int, figures: QuoteFigures
) -> QuoteInterruptions:
    """The interruptions of offer ``index`` at ``cards`` cards with ``figures``, and their warnings."""
    evaluation, resolved, tables = context.evaluation, context.resolved, context.tables
    losses, risk = evaluation.losses, resolved.risk
    hours = figures.compute_hours
    machines = math.ceil(cards / float(tables.machine_cards[index]))
    spot_per_hour = float(losses.spot_per_hour[1, index]) if losses.any_spot else 0.0
    hardware = cards * losses.per_card_hour * hours
    spot = machines * spot_per_hour * hours
    expected = hardware + spot
    serving = not resolved.kind.loses_work
    per_interruption = risk.restart_h if serving else risk.lost_hours
    hours_lost = expected * per_interruption
    down_share = None
    suggested = None
    if serving:
        down_share = _replica_down_share(context, index, spot_per_hour)
    elif risk.checkpoint_h is not None and expected > 0:
        suggested = young_daly_interval_h(risk.checkpoint_h, hours / expected)
    result = Interruptions(
        expected=_significant(expected),
        hardware=_significant(hardware),
        spot=_significant(spot),
        hours_lost=_significant(hours_lost),
        cost_cny=0.0 if serving else round_cny(hours_lost * figures.bill.hourly_rate_cny),
        high_includes=figures.high_interruptions,
        per_interruption_hours=round_hours(per_interruption),
        suggested_checkpoint_interval_h=None if suggested is None else round_hours(suggested),
        replica_down_share=None if down_share is None else _significant(down_share),
    )
    warnings: list[Message] = []
    spot_offer = bool(tables.interruptible[index])
    lang = context.lang
    if spot_offer:
        warnings.append(_spot_warning(context, index, spot_per_hour, down_share))
    elif down_share is not None and down_share >= _DOWN_SHARE_TOLD:
        warnings.append(_down_warning(context, down_share))
    if not serving and hours > 0 and hours_lost >= MATERIAL_SHARE * hours:
        warnings.append(
            said(
                "warn_interruptions",
                lang,
                hours=hours_text(hours_lost),
                count=significant_text(expected),
                per=hours_text(per_interruption),
                interval=number_text(risk.checkpoint_interval_h),
                restart=number_text(risk.restart_h * 60),
                high=figures.high_interruptions,
            )
        )
    if suggested is not None and risk.checkpoint_h is not None:
        warnings.append(
            said(
                "note_checkpoint_interval",
                lang,
                suggested=hours_text(suggested),
                minutes=number_text(risk.checkpoint_h * 60),
                between=hours_text(hours / expected),
                interval=number_text(risk.checkpoint_interval_h),
            )
        )
    return QuoteInterruptions(result, warnings)


def _replica_down_share(context: QuoteContext, index: int, spot_per_hour: float) -> float:
    """The share of time one replica is down: its interruptions per hour (its cards failing, its machines
    taken back) times the restart, over the time up and down."""
    evaluation, tables = context.evaluation, context.tables
    replica_cards = context.replica_cards()
    per_replica = 1.0 if replica_cards is None else float(replica_cards[index])
    machines = math.ceil(per_replica / float(tables.machine_cards[index]))
    rate = per_replica * evaluation.losses.per_card_hour + machines * spot_per_hour
    down = rate * context.resolved.risk.restart_h
    return down / (1 + down)


def _percent(share: float) -> str:
    return significant_text(100 * share, digits=2)


def _spot_warning(
    context: QuoteContext, index: int, spot_per_hour: float, down_share: float | None
) -> Message:
    """The spot warning: the vendor can take machines back, how often, and (serving) what that costs."""
    lang = context.lang
    stated = not math.isnan(float(context.tables.spot_stated_per_month[index]))
    rate = significant_text(spot_per_hour * HOURS_PER_MONTH)
    source = context.word("spot_rate_vendor" if stated else "spot_rate_default")
    if down_share is None:
        return said("warn_spot", lang, rate=rate, source=source)
    replicas = context.resolved.job.replicas
    cover = context.word("spot_cover_one" if replicas == 1 else "spot_cover_many")
    return said("warn_spot_serving", lang, rate=rate, source=source, share=_percent(down_share), cover=cover,
                restart=number_text(context.resolved.risk.restart_h * 60))  # fmt: skip


def _down_warning(context: QuoteContext, down_share: float) -> Message:
    restart = number_text(context.resolved.risk.restart_h * 60)
    return said("warn_replica_down", context.lang, share=_percent(down_share), restart=restart)

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
- interruptions that cost 1 % of the job's hours or more (``prose.risk.interruptions_told``, on the
  figures as shown): the hours next to the count ("plus about 15 h for 20 expected interruptions"),
  what each costs, and how many the high end includes;
- with ``workload.checkpoint_minutes``: the checkpoint interval that loses least (Young/Daly).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from schemas.quote import Interruptions, Lang
from service.quote.assemble.context import QuoteContext
from service.quote.assemble.figures import QuoteFigures
from service.quote.base.memo import memoized
from service.quote.base.money import round_cny, round_hours
from service.quote.model.interruptions import HOURS_PER_MONTH, young_daly_interval_h
from service.quote.prose.risk import interruptions_told
from service.quote.prose.texts import Message, hours_text, number_text, said, significant_text, text

__all__ = ["QuoteInterruptions", "interruptions_of"]

# The share of time a serving replica is down that is worth a warning on capacity that is not spot.
_DOWN_SHARE_TOLD = 0.001


def _significant(value: float) -> float:
    """``value`` to three significant digits (0 and NaN give 0): counts as small as 0.001 stay readable."""
    return 0.0 if math.isnan(value) else float(f"{value:.3g}")


class QuoteInterruptions(msgspec.Struct, frozen=True, gc=False):
    """A quote's ``Interruptions`` and the warnings about them."""

    figures: Interruptions
    warnings: list[Message]


def interruptions_of(
    context: QuoteContext, offers: Sequence[int], cards: Sequence[int], figures: Sequence[QuoteFigures]
) -> list[QuoteInterruptions]:
    """The interruptions of offer ``offers[i]`` at ``cards[i]`` cards with ``figures[i]``, and their
    warnings, for each i (a dozen quotes: Python floats cost less than array calls here)."""
    evaluation, resolved, tables = context.evaluation, context.resolved, context.tables
    losses, risk = evaluation.losses, resolved.risk
    serving = not resolved.kind.loses_work
    per_interruption = risk.restart_h if serving else risk.lost_hours
    per_shown = round_hours(per_interruption)
    spot_rates = losses.spot_per_hour[1].take(offers).tolist() if losses.any_spot else [0.0] * len(offers)
    downs = _replica_down_shares(context, offers, spot_rates) if serving else None
    results = []
    for at, (index, count, figure) in enumerate(zip(offers, cards, figures, strict=True)):
        hours = figure.compute_hours
        hardware = count * losses.per_card_hour * hours
        spot = math.ceil(count / tables.terms[index].machine_cards) * spot_rates[at] * hours
        expected = hardware + spot
        lost = expected * per_interruption
        suggested = None
        if risk.checkpoint_h is not None and not serving and expected > 0:
            suggested = round_hours(young_daly_interval_h(risk.checkpoint_h, hours / expected))
        result = Interruptions(
            expected=_significant(expected),
            hardware=_significant(hardware),
            spot=_significant(spot),
            hours_lost=_significant(lost),
            cost_cny=0.0 if serving else round_cny(lost * figure.bill.hourly_rate_cny),
            high_includes=figure.high_interruptions,
            per_interruption_hours=per_shown,
            suggested_checkpoint_interval_h=suggested,
            replica_down_share=None if downs is None else _significant(downs[at]),
        )
        results.append(QuoteInterruptions(result, _warnings(context, index, figure, result, spot_rates[at])))
    return results


def _warnings(
    context: QuoteContext, index: int, figure: QuoteFigures, shown: Interruptions, spot_per_hour: float
) -> list[Message]:
    """The warnings about a quote's interruptions, in the module docstring's order."""
    warnings: list[Message] = []
    lang, risk = context.lang, context.resolved.risk
    down_share = shown.replica_down_share
    if context.tables.interruptible[index]:
        warnings.append(_spot_warning(context, index, spot_per_hour, down_share))
    elif down_share is not None and down_share >= _DOWN_SHARE_TOLD:
        warnings.append(_down_warning(context, down_share))
    if interruptions_told(figure.hours.expected, shown):
        warnings.append(
            said(
                "warn_interruptions",
                lang,
                hours=hours_text(shown.hours_lost),
                count=significant_text(shown.expected),
                per=hours_text(shown.per_interruption_hours),
                interval=number_text(risk.checkpoint_interval_h),
                restart=number_text(risk.restart_h * 60),
                high=shown.high_includes,
            )
        )
    suggested = shown.suggested_checkpoint_interval_h
    if suggested is not None and risk.checkpoint_h is not None and shown.expected > 0:
        warnings.append(
            said(
                "note_checkpoint_interval",
                lang,
                suggested=hours_text(suggested),
                minutes=number_text(risk.checkpoint_h * 60),
                between=hours_text(figure.compute_hours / shown.expected),
                interval=number_text(risk.checkpoint_interval_h),
            )
        )
    return warnings


def _replica_down_shares(
    context: QuoteContext, rows: Sequence[int], spot_rates: Sequence[float]
) -> list[float]:
    """The share of time one replica is down on each of ``rows``: its interruptions per hour (its cards
    failing, its machines taken back) times the restart, over the time up and down."""
    tables, per_card_hour = context.tables, context.evaluation.losses.per_card_hour
    replica_cards = context.evaluation.piece_cards
    shares = []
    for index, spot_rate in zip(rows, spot_rates, strict=True):
        per_replica = 1.0 if replica_cards is None else float(replica_cards[index])
        machines = math.ceil(per_replica / tables.terms[index].machine_cards)
        down = (per_replica * per_card_hour + machines * spot_rate) * context.resolved.risk.restart_h
        shares.append(down / (1 + down))
    return shares


def _percent(share: float) -> str:
    return significant_text(100 * share, digits=2)


def _spot_warning(
    context: QuoteContext, index: int, spot_per_hour: float, down_share: float | None
) -> Message:
    """The spot warning: the vendor can take machines back, how often, and (serving) what that costs."""
    lang = context.lang
    stated = not math.isnan(float(context.tables.spot_stated_per_month[index]))
    if down_share is None:
        return _spot_message(spot_per_hour, stated, lang)
    rate = significant_text(spot_per_hour * HOURS_PER_MONTH)
    source = context.word("spot_rate_vendor" if stated else "spot_rate_default")
    replicas = context.resolved.job.replicas
    cover = context.word("spot_cover_one" if replicas == 1 else "spot_cover_many")
    return said("warn_spot_serving", lang, rate=rate, source=source, share=_percent(down_share), cover=cover,
                restart=number_text(context.resolved.risk.restart_h * 60))  # fmt: skip


@memoized(256)
def _spot_message(spot_per_hour: float, stated: bool, lang: Lang) -> Message:
    """The spot warning of a job that loses work, the same for every offer of one rate and source: a
    response names a dozen offers of a few rates."""
    source = text("spot_rate_vendor" if stated else "spot_rate_default", lang)
    return said("warn_spot", lang, rate=significant_text(spot_per_hour * HOURS_PER_MONTH), source=source)


def _down_warning(context: QuoteContext, down_share: float) -> Message:
    restart = number_text(context.resolved.risk.restart_h * 60)
    return said("warn_replica_down", context.lang, share=_percent(down_share), restart=restart)

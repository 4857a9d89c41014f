"""What a quote of a job placed in pieces says about them: a serving job's replicas and what they serve, an
independent job's runs at once and its rounds.

The pieces' cards come from the job kind (``JobKind.piece_cards``); a throughput target's per-replica
figures from ``model.throughput``, as the evaluation sized the replicas with them.
"""

from __future__ import annotations

import math
from typing import Any

from schemas.quote import Range
from service.quote.assemble.context import QuoteContext
from service.quote.model.throughput import BANDWIDTH_USE
from service.quote.prose.names import gpu_name
from service.quote.prose.texts import Message, hours_text, number_text, said, text

__all__ = ["piece_fields", "piece_notes"]


def _pieces(context: QuoteContext, index: int, cards: int) -> int | None:
    piece_cards = context.evaluation.piece_cards
    if piece_cards is None:
        return None
    return int(cards // piece_cards[index])


def _served(context: QuoteContext, index: int, replicas: int) -> Range | None:
    throughput = context.evaluation.replica_tokens_per_s
    if throughput is None:
        return None
    low, expected, high = (float(round(replicas * bound)) for bound in throughput[:, index].tolist())
    return Range(low, expected, high)


def piece_fields(context: QuoteContext, index: int, cards: int) -> dict[str, Any]:
    """The quote's ``replicas`` and ``tokens_per_s`` (serving), or ``runs_at_once`` and ``rounds``
    (independent runs); nothing for a job that runs as one."""
    pieces = _pieces(context, index, cards)
    if pieces is None:
        return {}
    job = context.resolved.job
    if job.kind == "serving":
        return {"replicas": pieces, "tokens_per_s": _served(context, index, pieces)}
    rounds = None if job.runs is None or pieces == 0 else math.ceil(job.runs / pieces)
    return {"runs_at_once": pieces, "rounds": rounds}


def piece_notes(context: QuoteContext, index: int, cards: int, hours: float) -> list[Message]:
    """How the pieces serve or finish the job, and a target the low end of the estimate misses."""
    pieces = _pieces(context, index, cards)
    if pieces is None or pieces == 0:
        return []
    job, lang = context.resolved.job, context.lang
    piece_cards = int(cards // pieces)
    if job.kind != "serving":
        if job.runs is None:
            return [said("note_divides", lang, at_once=pieces, cards=piece_cards)]
        rounds = math.ceil(job.runs / pieces)
        return [said("note_runs", lang, rounds=rounds, at_once=pieces, hours=hours_text(hours / rounds))]
    throughput, per_replica = job.throughput, context.evaluation.replica_tokens_per_s
    if throughput is None or per_replica is None:
        return []
    offer = context.tables.offers[index]
    low, expected, high = per_replica[:, index].tolist()
    if throughput.measured_tokens_per_s is not None:
        how = text("throughput_measured", lang)
    else:
        bandwidth = context.catalog.get(offer.gpu).bandwidth_tb_s or 0.0
        how = text(
            "throughput_estimated",
            lang,
            bandwidth=number_text(bandwidth * piece_cards),
            weights=number_text(throughput.weight_gb or 0.0),
            low=number_text(BANDWIDTH_USE.low),
            high=number_text(BANDWIDTH_USE.high),
        )
    notes = [
        said(
            "note_replica_throughput",
            lang,
            replica_cards=piece_cards,
            gpu=gpu_name(offer.gpu, context.catalog),
            per_replica=_tokens(expected),
            per_range=""
            if low == high
            else text("range_suffix", lang, low=_tokens(low), high=_tokens(high), unit=""),
            concurrency=throughput.concurrent_requests,
            how=how,
            replicas=pieces,
            total=_tokens(pieces * expected),
            target=_tokens(throughput.target_tokens_per_s),
        )
    ]
    if pieces * low < throughput.target_tokens_per_s:
        notes.append(
            said(
                "warn_throughput_low",
                lang,
                replicas=pieces,
                low=_tokens(pieces * low),
                target=_tokens(throughput.target_tokens_per_s),
            )
        )
    return notes


def _tokens(value: float) -> str:
    """Tokens per second to the whole token: ``3,200``."""
    return f"{round(value):,}"

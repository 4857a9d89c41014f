"""``gpuquote quote``: a quote from the configured store, as a ranked table or the response JSON.

    gpuquote quote --gpu-hours 48 --gpu rtx4090 --cards 1,4 [--rank-by time] [--lang zh] [--json]

``--gpu`` filters the offers and, when exactly one is given, is also the GPU the hours were measured on
(``--reference-gpu`` overrides). The request goes through the same schema as ``POST /quote``, so a bad
argument is reported by its own flag (``--budget-cny``, not ``budget_cny``) with the reason in a sentence.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import unicodedata
from typing import Any

import msgspec

from adapters.gpus import DEFAULT_GPU_CATALOG, GpuCatalog
from schemas.quote import Lang, Quote, QuoteRequest, QuoteResponse
from schemas.vendor import ILLUSTRATIVE_LABEL
from service.cli.arguments import ArgumentError, argument_error, card_counts, names, scaling, speed_ratios
from service.cli.exits import EXIT_2_ERRORS
from service.cli.quote_parser import add_quote_parser
from service.cli.texts import table_text
from service.errors import InvalidRequest
from service.inputs import convert_input
from service.names import gpu_display_name
from service.quote.prose import format_cny, hours_text, join_text, text
from service.services import build_services
from service.settings import Settings

__all__ = ["EXIT_2_ERRORS", "add_quote_parser", "build_request", "format_table", "run_quote_command"]

# The table's columns, each header a ``table_<column>`` message.
_COLUMNS = ("rank", "gpu", "cards", "offer", "pricing", "hours", "cost", "card_hour", "notes")


def build_request(args: argparse.Namespace) -> QuoteRequest:
    """The ``QuoteRequest`` the arguments describe; raises ``ArgumentError`` naming the flag."""
    gpus = names(args.gpu)
    serving = args.serving_hours is not None
    sized = args.tokens is not None
    reference = args.reference_gpu or (
        gpus[0] if gpus and len(gpus) == 1 and not (serving or sized) else None
    )
    workload = {
        "gpu_hours": args.gpu_hours,
        "kind": "serving" if serving else "independent" if args.independent else None,
        "hours": args.serving_hours,
        "replicas": args.replicas,
        "reference_gpu": reference,
        "speed_ratios": speed_ratios(args.speed_ratio),
        "model_params_b": args.params_b,
        "model": args.model,
        "precision": args.precision,
        "task": args.task or ("inference" if serving else None),
        "communication": args.communication,
        "cross_node_factor": args.cross_node_factor,
        "data_city": args.data_city,
        "dataset_gb": args.dataset_gb,
        "tokens": args.tokens,
        "mfu": args.mfu,
        "runs": args.runs,
        "cards_per_run": args.cards_per_run,
        "target_tokens_per_s": args.target_tokens_per_s,
        "concurrent_requests": args.concurrent_requests,
        "replica_tokens_per_s": args.replica_tokens_per_s,
        "growth_factor": args.growth_factor,
        "checkpoint_interval_h": args.checkpoint_interval_h,
        "checkpoint_minutes": args.checkpoint_minutes,
        "restart_minutes": args.restart_minutes,
    }
    raw: dict[str, Any] = {
        "workload": {key: value for key, value in workload.items() if value is not None},
        "gpus": gpus,
        "regions": names(args.region),
        "cities": names(args.city),
        "vendors": names(args.vendor),
        "pricing": names(args.pricing),
        "card_counts": card_counts(args.cards),
        "deadline_hours": args.deadline_hours,
        "budget_cny": args.budget_cny,
        "deadline_confidence": args.deadline_confidence,
        "budget_confidence": args.budget_confidence,
        "allow_spot": args.allow_spot,
        "rank_by": args.rank_by,
        "time_value_cny_per_hour": args.time_value,
        "scaling": scaling(args.scaling),
        "limit": args.limit,
        "lang": args.lang,
    }
    try:
        return convert_input({key: value for key, value in raw.items() if value is not None}, QuoteRequest)
    except InvalidRequest as error:
        raise argument_error(error) from None


def _range_text(low: str, expected: str, high: str) -> str:
    return expected if low == high else f"{expected} ({low}–{high})"


def _width(cell: str) -> int:
    """Terminal columns ``cell`` takes: Chinese characters are two wide."""
    return sum(2 if unicodedata.east_asian_width(character) in "WF" else 1 for character in cell)


def _pad(cell: str, width: int) -> str:
    return cell + " " * (width - _width(cell))


def _footnotes(quotes: list[Quote]) -> dict[str, int]:
    """Each distinct warning on a quote, numbered in the order the rows first give it: the table marks a
    row with its warnings' numbers and prints every warning once, in full, under the table."""
    numbers: dict[str, int] = {}
    for quote in quotes:
        for warning in quote.warnings:
            numbers.setdefault(warning, len(numbers) + 1)
    return numbers


def _notes(response: QuoteResponse, quote: Quote, lang: Lang, footnotes: dict[str, int]) -> str:
    marks = [
        table_text(f"table_{name}", lang)
        for name, quote_id in (("cheapest", response.cheapest), ("fastest", response.fastest),
                               ("recommended", response.recommended), ("safe", response.safe))
        if quote_id == quote.id
    ]  # fmt: skip
    if quote.spot:
        marks.append(table_text("table_spot", lang))
    if quote.warnings:
        numbers = ",".join(f"[{footnotes[warning]}]" for warning in quote.warnings)
        marks.append(table_text("table_warnings", lang, marks=numbers))
    return join_text("join_list", marks, lang)


def _pricing_name(pricing: str, lang: Lang) -> str:
    """English keeps the API's pricing ids (``card_hour``); Chinese names them (按卡时计费)."""
    return text(f"pricing_{pricing}", lang) if lang == "zh" else pricing


def format_table(
    response: QuoteResponse, lang: Lang = "en", catalog: GpuCatalog = DEFAULT_GPU_CATALOG
) -> str:
    """The ranked quotes as a plain-text table, each quote's warnings numbered under it in full, then the
    summary, the response's warnings and exclusions, in ``lang``; GPUs as people write them (``RTX 4090``)."""
    header = tuple(table_text(f"table_{name}", lang) for name in _COLUMNS)
    rows = [header]
    mark = table_text("table_illustrative_mark", lang)
    footnotes = _footnotes(response.quotes)
    for quote in response.quotes:
        # An illustrative reference price is marked on its row and explained under the table.
        offer = quote.offer_id + mark if quote.label == ILLUSTRATIVE_LABEL else quote.offer_id
        hours = _range_text(
            *(hours_text(value) for value in (quote.hours.low, quote.hours.expected, quote.hours.high))
        )
        cost = _range_text(*(format_cny(value) for value in (quote.cost_cny.low, quote.cost_cny.expected,
                                                              quote.cost_cny.high)))  # fmt: skip
        rows.append((str(quote.rank) if quote.rank else "–", gpu_display_name(quote.gpu, catalog), str(quote.cards), offer,
                     _pricing_name(quote.pricing, lang), hours, cost,
                     format_cny(quote.effective_card_hour_cny), _notes(response, quote, lang, footnotes)))  # fmt: skip
    widths = [max(_width(row[column]) for row in rows) for column in range(len(header))]
    lines = [
        "  ".join(_pad(cell, width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    if not response.quotes:
        lines = [table_text("table_no_quotes", lang)]
    if any(quote.label == ILLUSTRATIVE_LABEL for quote in response.quotes):
        lines.append(table_text("table_illustrative_note", lang))
    lines += [table_text("table_quote_warning", lang, mark=number, warning=warning)
              for warning, number in footnotes.items()]  # fmt: skip
    lines += ["", response.summary]
    lines += [table_text("table_warning", lang, warning=warning) for warning in response.warnings]
    excluded = msgspec.structs.asdict(response.excluded)
    counted = join_text(
        "join_list",
        (table_text("table_excluded", lang, reason=table_text(f"table_reason_{reason}", lang), count=count)
         for reason, count in excluded.items() if count),
        lang,
    )  # fmt: skip
    excluded_text = counted or table_text("table_excluded_none", lang)
    lines.append(table_text("table_footer", lang, excluded=excluded_text, version=response.snapshot.version))
    return "\n".join(lines)


async def _quote(args: argparse.Namespace, request: QuoteRequest) -> QuoteResponse:
    async with build_services(Settings.from_env()).running() as services:
        return await services.quote(request)


def run_quote_command(args: argparse.Namespace) -> int:
    """Print the quote; exit 0 with quotes, 1 when nothing fits, 2 on a bad argument."""
    try:
        request = build_request(args)
        response = asyncio.run(_quote(args, request))
    except ArgumentError as error:
        print(f"gpuquote quote: {error}", file=sys.stderr)
        return 2
    except InvalidRequest as error:
        print(f"gpuquote quote: {argument_error(error)}", file=sys.stderr)
        return 2
    if args.json:
        print(msgspec.json.format(msgspec.json.encode(response).decode(), indent=2))
    else:
        print(format_table(response, args.lang))
    return 0 if response.quotes else 1

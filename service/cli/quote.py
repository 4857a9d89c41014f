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
from service.cli.texts import table_text
from service.errors import InvalidRequest
from service.inputs import convert_input
from service.names import gpu_display_name
from service.quote.prose import format_cny, hours_text, join_text, text
from service.services import build_services
from service.settings import Settings

__all__ = ["add_quote_parser", "build_request", "format_table", "run_quote_command"]

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


def add_quote_parser(commands: Any) -> argparse.ArgumentParser:
    """Add the ``quote`` sub-command to ``commands`` (an ``add_subparsers()`` result)."""
    quote = commands.add_parser("quote", help="rank every way to run a GPU job by cost and time")
    quote.add_argument("--gpu-hours", type=float, help="a batch job: its wall-clock hours on ONE card")
    quote.add_argument("--serving-hours", type=float, help="a serving job instead: wall-clock hours to serve")
    quote.add_argument("--replicas", type=int, help="serving replicas (default 1)")
    quote.add_argument("--tokens", type=float, help="size the job by its tokens (with --model and --task)")
    quote.add_argument("--mfu", type=float, help="measured model FLOPs utilization for --tokens, e.g. 0.4")
    quote.add_argument(
        "--independent", action="store_true", help="the work splits into runs that never talk (a sweep)"
    )
    quote.add_argument("--runs", type=int, help="independent runs, equal (default: the work divides freely)")
    quote.add_argument("--cards-per-run", type=int, help="cards each independent run takes")
    quote.add_argument("--target-tokens-per-s", type=float, help="serving: tokens per second to serve in all")
    quote.add_argument("--concurrent-requests", type=int, help="serving: requests a replica serves at once")
    quote.add_argument("--replica-tokens-per-s", type=float, help="serving: measured tokens/s of one replica")
    quote.add_argument("--growth-factor", type=float, help="how much the work may grow, e.g. 2")
    quote.add_argument("--gpu", action="append", help="GPU id(s) to consider, e.g. rtx4090 (comma-separated)")
    quote.add_argument("--reference-gpu", help="GPU the hours were measured on (default: the one --gpu)")
    quote.add_argument("--cards", help="card counts, comma-separated (default: every count an offer sells)")
    quote.add_argument(
        "--speed-ratio", action="append", help="measured speed vs the reference, e.g. h800=3.2"
    )
    quote.add_argument("--region", action="append", help="region(s), e.g. jiangsu or 江苏")
    quote.add_argument("--city", action="append", help="city(ies), e.g. suzhou or 苏州")
    quote.add_argument("--vendor", action="append", help="vendor id(s)")
    quote.add_argument("--pricing", action="append", help="card_hour, node_hour, bundle, term")
    quote.add_argument("--params-b", type=float, help="model size, billions of parameters")
    quote.add_argument("--model", help="a named model instead of --params-b, e.g. qwen2.5-72b")
    quote.add_argument("--precision", help="bf16, fp8, int8, int4 (bytes per weight)")
    quote.add_argument("--task", help="inference, lora, qlora, full_finetune, pretrain")
    quote.add_argument(
        "--communication", help="light, moderate, heavy (default: moderate, heavy for a split model)"
    )
    quote.add_argument("--cross-node-factor", type=float, help="measured scaling kept per node doubling")
    quote.add_argument("--data-city", help="where the data lives, e.g. nanjing or 南京")
    quote.add_argument("--dataset-gb", type=float, help="data size to copy to another city")
    quote.add_argument("--deadline-hours", type=float)
    quote.add_argument("--budget-cny", type=float)
    quote.add_argument(
        "--deadline-confidence",
        help="expected (default): the expected hours meet the deadline; high: even the high end does",
    )
    quote.add_argument("--budget-confidence", help="expected (default) or high, as --deadline-confidence")
    quote.add_argument(
        "--allow-spot",
        action=argparse.BooleanOptionalAction,
        help="quote spot / interruptible offers (default: yes for a batch job, no for serving)",
    )
    quote.add_argument("--checkpoint-interval-h", type=float, help="hours between checkpoints (default 1)")
    quote.add_argument("--checkpoint-minutes", type=float, help="minutes one checkpoint takes to write")
    quote.add_argument("--restart-minutes", type=float, help="minutes to run again after an interruption")
    quote.add_argument("--time-value", type=float, help="CNY one hour of waiting costs (for --rank-by value)")
    quote.add_argument(
        "--scaling", help="profile (default, nvlink, comm_heavy) or JSON: '{\"4\": [3.5, 3.8]}'"
    )
    quote.add_argument("--rank-by", choices=("cost", "time", "value"), default="cost")
    quote.add_argument("--limit", type=int, default=10)
    quote.add_argument("--lang", choices=("en", "zh"), default="en")
    quote.add_argument("--json", action="store_true", help="print the QuoteResponse JSON")
    quote.set_defaults(handler=run_quote_command)
    parser: argparse.ArgumentParser = quote
    return parser

"""The ``gpuquote quote`` sub-command's arguments, apart from what runs it (``service.cli.quote``): the
command line is parsed without loading the engine."""

from __future__ import annotations

import argparse
from typing import Any

from service.cli.command import Command

__all__ = ["add_quote_parser"]


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
    quote.set_defaults(handler=Command("service.cli.quote", "run_quote_command"))
    parser: argparse.ArgumentParser = quote
    return parser

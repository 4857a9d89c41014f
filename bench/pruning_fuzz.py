"""Pruned answers against every row billed, at market scale: random limits, rankings and filters.

Run: ``.venv/bin/python bench/pruning_fuzz.py [--offers 96000] [--requests 250] [--seed 1]`` (about 30 s
per 250 requests at 96,000 offers, 10 s at 18,000). It quotes each request twice in process, on the
market catalog of ``bench/market_catalog.py`` (fetch times pinned): with the service's fast paths, and
with every one but bound pruning (``FastPaths(bound_pruning=False)``, every row billed), and prints every
request whose answers differ, byte for byte; it exits 1 when any does.

The seeded tests (``tests/quote/test_bound_pruning.py``, ``test_limit_pruning.py``) run catalogs of
hundreds to a few thousand offers; the cuts a pruning makes at market scale (tens of thousands of rows
within reach of a limit, the first plan free of risk far down a ranking of spot plans) show here. Each
request draws: a job of 1 to 5,000 GPU-hours measured on one of five GPUs, with or without a model size;
a deadline, a budget or both (or neither, one in ten), each judged on the expected figures or now and then
on the high end; a ranking by cost, time or value; and now and then a time value, spot allowed or refused,
another limit, one pricing kind, or a few vendors alone (which removes offers a pruning would keep).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]

import msgspec  # noqa: E402
from answers import _market_snapshot  # noqa: E402

from schemas.quote import QuoteRequest, Workload  # noqa: E402
from service.quote import FastPaths, QuoteOptions, Snapshot  # noqa: E402
from tests.quote.factories import MAX_AGE_S, NOW  # noqa: E402
from tests.quote.seeded import answers  # noqa: E402

GPUS = ("rtx4090", "a100-80g", "h800", "l40s", "h20")
PRICING = ("card_hour", "node_hour", "bundle", "term", "mixed")


def _limits(rng: random.Random) -> dict[str, Any]:
    limits: dict[str, Any] = {}
    drawn = rng.random()
    if drawn < 0.4:
        limits["deadline_hours"] = round(rng.uniform(2, 300), 2)
    elif drawn < 0.7:
        limits["budget_cny"] = round(rng.uniform(50, 30_000), 2)
    elif drawn < 0.9:
        limits["deadline_hours"] = round(rng.uniform(2, 300), 2)
        limits["budget_cny"] = round(rng.uniform(50, 30_000), 2)
    if rng.random() < 0.15:
        limits["deadline_confidence"] = "high"
    if rng.random() < 0.15:
        limits["budget_confidence"] = "high"
    return limits


def random_request(rng: random.Random, vendors: Sequence[str]) -> QuoteRequest:
    """One request drawn as the module docstring says."""
    workload = Workload(
        gpu_hours=round(rng.uniform(1, 5_000), 3),
        reference_gpu=rng.choice(GPUS),
        model_params_b=rng.choice((None, 7, 14, 32, 70)),
    )
    fields: dict[str, Any] = {**_limits(rng), "rank_by": rng.choice(("cost", "cost", "time", "value"))}
    if fields["rank_by"] == "value" or rng.random() < 0.2:
        fields["time_value_cny_per_hour"] = round(rng.uniform(1, 300), 2)
    if rng.random() < 0.2:
        fields["allow_spot"] = rng.choice((True, False))
    if rng.random() < 0.2:
        fields["limit"] = rng.choice((1, 3, 20, 50))
    if rng.random() < 0.15:
        fields["pricing"] = [rng.choice(PRICING)]
    if rng.random() < 0.1:
        fields["vendors"] = rng.sample(list(vendors), rng.randint(1, 3))
    return QuoteRequest(workload=workload, **fields)


def differing(snapshot: Snapshot, asked: list[QuoteRequest]) -> list[int]:
    """Positions of the requests whose pruned answers are not those with every row billed."""
    pruned = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S)
    billed = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(bound_pruning=False))
    return [
        at
        for at, (first, second) in enumerate(
            zip(answers(snapshot, asked, pruned), answers(snapshot, asked, billed), strict=True)
        )
        if first != second
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--offers", type=int, default=96_000, help="offers in the catalog")
    parser.add_argument("--requests", type=int, default=250, help="requests drawn")
    parser.add_argument("--seed", type=int, default=1, help="seed of the draws")
    args = parser.parse_args(argv)
    snapshot = _market_snapshot(args.offers)
    vendors = sorted({offer.vendor for offer in snapshot.offers})
    rng = random.Random(args.seed)
    asked = [random_request(rng, vendors) for _ in range(args.requests)]
    started = time.monotonic()
    found = differing(snapshot, asked)
    for at in found:
        print(f"differs: request {at}: {msgspec.json.encode(asked[at]).decode()}")
    elapsed = time.monotonic() - started
    print(
        f"{len(found)} of {len(asked)} answers differ at {args.offers:,} offers, seed {args.seed} ({elapsed:.0f} s)"
    )
    if found:
        sys.exit(1)


if __name__ == "__main__":
    main()

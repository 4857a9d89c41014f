"""What a deadline or a budget costs a quote at market scale: each kind of limit beside the default quote.

Run: ``.venv/bin/python bench/limits.py [--offers 96000] [--rounds 20]`` (about a minute). It starts
``gpuquote serve`` the way ``bench/market.py`` does (production's server, logging and middleware, over
static feeds of ``bench/market_catalog.py``) and times unique ``POST /quote`` requests one at a time on a
keep-alive connection: per round, one request of each kind below, in turn, so the machine's drift hits
each alike; every request is new (its ``gpu_hours`` moves by a thousandth each round), so the quote cache
never answers. It prints each kind's median and its ratio to the default quote's median in the same run.

- ``default``: ``bench/market_requests.default_request``, no limit (the baseline);
- ``deadline passing every candidate``: 500 GPU-hours due in 10,000 h, judged on the expected hours;
- ``the same, judged on the high end``: ``deadline_confidence`` "high";
- ``deadline some candidates miss``: 2,000 GPU-hours due in 48 h (most rows within reach);
- ``deadline most rows meet, H20``: 1,300 GPU-hours measured on an H20 due in 105 h (the cheapest plans
  are spot, and the first on demand passes the deadline at its high end);
- ``budget most rows meet``: 1,000 GPU-hours for 15,000 yuan (the cheapest plans are spot);
- ``tight deadline, high end``: 4,000 GPU-hours on H800s due in 36 h, judged on the high end;
- ``budget, high end``: 1,000 GPU-hours for 1,500 yuan, judged on the high end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]

import msgspec  # noqa: E402
from market_catalog import market_catalog  # noqa: E402
from market_client import Connection  # noqa: E402
from market_figures import progress  # noqa: E402
from market_requests import default_request  # noqa: E402
from market_servers import catalog_server  # noqa: E402

from schemas.quote import QuoteRequest  # noqa: E402


def _kinds() -> dict[str, Callable[[int], QuoteRequest]]:
    def limited(hours: float, reference_gpu: str, **limits: object) -> Callable[[int], QuoteRequest]:
        def request(index: int) -> QuoteRequest:
            workload = {"gpu_hours": hours + index / 1000, "reference_gpu": reference_gpu}
            return msgspec.convert({"workload": workload, **limits}, QuoteRequest)

        return request

    return {
        "default": default_request,
        "deadline passing every candidate": limited(500, "rtx4090", deadline_hours=10_000),
        "the same, judged on the high end": limited(
            500, "rtx4090", deadline_hours=10_000, deadline_confidence="high"
        ),
        "deadline some candidates miss": limited(2_000, "rtx4090", deadline_hours=48),
        "deadline most rows meet, H20": limited(1_300, "h20", deadline_hours=105),
        "budget most rows meet": limited(1_000, "rtx4090", budget_cny=15_000),
        "tight deadline, high end": limited(4_000, "h800", deadline_hours=36, deadline_confidence="high"),
        "budget, high end": limited(1_000, "rtx4090", budget_cny=1_500, budget_confidence="high"),
    }


def measure(url: str, rounds: int) -> dict[str, list[float]]:
    """Per kind, each round's request time in ms (one request of every kind per round, in turn)."""
    kinds = _kinds()
    times: dict[str, list[float]] = {name: [] for name in kinds}
    with Connection(url) as connection:
        for index in range(rounds + 2):
            for name, request in kinds.items():
                reply = connection.quote(request(index))
                if reply.status != 200:
                    raise RuntimeError(f"{name}: {reply.status} {reply.body[:300]!r}")
                if index >= 2:  # the first two rounds warm each kind's shared tables
                    times[name].append(reply.seconds * 1e3)
    return times


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--offers", type=int, default=96_000, help="offers in the catalog")
    parser.add_argument("--rounds", type=int, default=20, help="requests of each kind timed")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gpuquote-limits-") as folder:
        progress(f"starting gpuquote serve over {args.offers:,} offers")
        with catalog_server(Path(folder) / "offers", market_catalog(args.offers)) as server:
            progress(f"{args.rounds} rounds of every kind")
            times = measure(server.url, args.rounds)
    baseline = statistics.median(times["default"])
    print(f"{'request':<36} {'median ms':>10} {'÷ default':>10}")
    for name, measured in times.items():
        median = statistics.median(measured)
        print(f"{name:<36} {median:>10.1f} {median / baseline:>10.2f}")
    print(f"{args.offers:,} offers, {args.rounds} requests of each kind")


if __name__ == "__main__":
    main()

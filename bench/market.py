"""Benchmark of the quote service at market scale: six measures, each beside its target, in one table.

Run: ``.venv/bin/python bench/market.py [--quick] [--only 1,2,...]`` (``make bench-market``; needs
``wrk`` and ``redis-server``). About 3 minutes in full on a 2-core machine; ``--quick`` (under a
minute) is a smoke run over smaller catalogs and shorter windows; ``--keep DIR`` keeps the feeds and the
servers' logs. It prints figures only, and the commit they were measured at.

What runs is what production runs: ``gpuquote serve`` (granian, one worker, JSON access logs, the request
middleware and metrics, the rate limiter on with a limit no run reaches) over a vendors file of static
feeds in a temp folder (``bench/market_catalog.py``: 40 vendors in Shenzhen and six Jiangsu cities, every
pricing kind, spot offers, stock figures, data fees; seeded). Every request is new, so the quote cache never
answers. Latencies are timed one request at a time on a raw keep-alive socket (``bench/market_client.py``);
throughput is wrk's.

1. Growth: the median unique default quote (``bench/http_load.py``'s shape) at 96,000 offers over the
   median at 2,000 (target <= 2); the medians at 2,000, 18,000 and 96,000. The three servers run side by
   side and answer the same requests in alternating blocks, so the machine's drift hits each alike.
2. Varied requests at 96,000 offers: the slowest of 200 (target <= 20 ms), from a seeded mix of defaults,
   deadlines, budgets, serving (replicas or tokens/s), named models, data in a city, heavy communication,
   rank by time and by value, independent runs and jobs sized by tokens (``bench/market_requests.py``);
   p50, p99, the non-200 answers and the slowest request's shape. The large catalog's server runs alone
   for this measure and measure 4, the others stopped after measure 1 (``_memory_store_measures``: why).
3. Clusters: 300 node-hour offers selling up to 1,024 nodes; the median unique deadline request (target <=
   3 ms), the first quote after start-up, and the snapshot's tables built in-process.
4. Memory: VmRSS of the serving process and its children at 96,000 offers, before and after the varied
   requests (target <= 300 MB, 1 MB = 10^6 bytes), and once more 2.5 s later with nothing asked: what
   the server keeps, once the freed memory its heap still held is given back (``service.heap``).
5. Framework share: unique quotes/s at 2,000 offers over the floor's requests/s (target >= 0.15); the
   floor is a bare Litestar ``POST /quote`` under the same granian settings that decodes the body and
   answers a real quote response's bytes (``bench/market_servers.py``). wrk, same connections, best of
   two alternating rounds each, against a 2,000-offer server started for this measure alone.
6. Rebuild: over a private ``redis-server`` seeded by ``gpuquote refresh``, quote p99 under steady load
   (one request in flight) while every feed's prices move 5 % (inside the quarantine ratio) and
   ``gpuquote refresh`` runs, from its start until quotes name the new store version, over the p99 before
   (target <= 2). The server has a CPU of its own; the refresh, Redis and the client share the other,
   standing in for the CronJob's and Redis's pods (``bench/market_rebuild.py``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]

from market_catalog import cluster_catalog, market_catalog  # noqa: E402
from market_figures import Indices, Table, progress  # noqa: E402
from market_measures import (  # noqa: E402
    measure_clusters,
    measure_framework_share,
    measure_growth,
    measure_memory,
    measure_varied,
)
from market_plan import FULL, QUICK, Plan  # noqa: E402
from market_rebuild import measure_rebuild  # noqa: E402
from market_servers import Server, catalog_server, floor_app  # noqa: E402

from service.cli.serve import DEFAULT_SERVER, run_server  # noqa: E402
from service.settings import Settings  # noqa: E402

MEASURES = (1, 2, 3, 4, 5, 6)
# Measure 4's second look after the varied requests: past the server's heap-trim interval (1 s).
_SETTLE_S = 2.5


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], check=False, cwd=BENCH_DIR, capture_output=True, text=True
        ).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + (
        " (uncommitted changes)" if git("status", "--porcelain") else ""
    )


def _memory_store_measures(only: set[int], plan: Plan, folder: Path, table: Table, indices: Indices) -> None:
    """Measures 1, 2, 4 and 5 over embedded-store servers, each started the way production starts: the
    three catalogs' servers up at once for measure 1 (it alternates between them); then the large one
    alone for measures 4 and 2, and a small one of its own beside the floor for measure 5. A server idle
    beside the one measured is no part of production: with the small and medium servers idle beside it,
    the slowest of the 200 varied requests came out at 113-232 ms in 7 runs of 8 (65 ms in the other),
    against 47-74 ms in 9 runs alone (p99 67-109 ms in those 7, 43-58 ms alone), though the idle servers
    took 0.3 % of a CPU (in one pair of runs, the large one's own CPU time for the same requests rose 25 %
    beside them; in a pair where the tail did not rise, it did not)."""
    wanted = {plan.small_offers: {1}, plan.medium_offers: {1}, plan.large_offers: {1, 2, 4}}
    with ExitStack() as stack:
        servers = {
            offers: _started(stack, folder / f"offers-{offers}", offers, table)
            for offers, needed_by in wanted.items()
            if needed_by & only
        }
        if 1 in only:
            progress("1: unique default quotes, alternating between the catalogs")
            measure_growth(plan, table, indices, {offers: server for offers, (server, _) in servers.items()})
        for offers, (_, own) in servers.items():
            if offers != plan.large_offers:
                own.close()
        if plan.large_offers in servers:
            large, _ = servers[plan.large_offers]
            if 4 in only:
                measure_memory(table, "before the varied requests", large)
            if {2, 4} & only:
                progress("2: varied requests")
                measure_varied(plan, table, large)
            if 4 in only:
                measure_memory(table, "after the varied requests", large)
                # What stays: the server gives freed memory back within its heap-trim interval (1 s).
                time.sleep(_SETTLE_S)
                measure_memory(table, f"  {_SETTLE_S:g} s later, idle", large, target=False)
    if 5 in only:
        with ExitStack() as stack:
            small, _ = _started(stack, folder / f"offers-{plan.small_offers}", plan.small_offers, table)
            progress("5: wrk against the service and the framework floor")
            measure_framework_share(folder, plan, table, indices, small)


def _started(stack: ExitStack, folder: Path, offers: int, table: Table) -> tuple[Server, ExitStack]:
    """``gpuquote serve`` over a catalog of ``offers`` (its feeds in ``folder``), stopped by the stack it
    is returned with (closed by ``stack`` at the latest)."""
    progress(f"starting gpuquote serve over {offers:,} offers")
    own = stack.enter_context(ExitStack())
    server = own.enter_context(catalog_server(folder, market_catalog(offers)))
    table.notes.append(f"start-up with {offers:,} offers: {server.started_in_s:.1f} s")
    return server, own


def run(only: Sequence[int], plan: Plan, folder: Path) -> Table:
    table, indices = Table(), Indices()
    _memory_store_measures(set(only), plan, folder, table, indices)
    if 3 in only:
        progress("3: deadline quotes over 300 clusters")
        measure_clusters(folder, plan, table, cluster_catalog())
    if 6 in only:
        progress(f"6: {plan.large_offers:,} offers on Redis, a rebuild under load")
        measure_rebuild(folder, plan, table, indices, market_catalog(plan.large_offers))
    table.rows.sort(key=lambda row: row[0])  # stable: each measure's rows in the order they were added
    return table


def _measures(text: str) -> list[int]:
    chosen = sorted({int(part) for part in text.split(",") if part.strip()})
    if not set(chosen) <= set(MEASURES):
        raise argparse.ArgumentTypeError(f"measures are {MEASURES}")
    return chosen


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller catalogs and shorter runs (smoke)")
    parser.add_argument("--only", type=_measures, default=list(MEASURES), help="measures to run: 1,2,...")
    parser.add_argument("--keep", type=Path, help="a new folder to write into and keep (logs, feeds)")
    parser.add_argument("--serve-floor", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--host", default="127.0.0.1", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=8000, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_floor:
        floor_app()  # fail here, not inside the worker, when the body file is missing
        run_server("market_servers:floor_app", server=DEFAULT_SERVER, host=args.host, port=args.port,
                   workers=1, settings=Settings.from_env())  # fmt: skip
        return
    for tool in ("wrk", "redis-server"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found: `make system-deps` installs it")
    plan = QUICK if args.quick else FULL
    started = time.monotonic()
    if args.keep is not None:  # the feeds, server and refresh logs stay for a look afterwards
        args.keep.mkdir(parents=True, exist_ok=False)
        table = run(args.only, plan, args.keep)
    else:
        with tempfile.TemporaryDirectory(prefix="gpuquote-market-") as temp:
            table = run(args.only, plan, Path(temp))
    heading = f"gpuquote market-scale benchmark at commit {_commit()}{' (--quick)' if args.quick else ''}"
    table.print(heading)
    print(f"measured in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()

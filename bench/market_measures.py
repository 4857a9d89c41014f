"""``bench/market.py``'s measures 1 to 5, over servers on the embedded store that run side by side.

The machine is shared and noisy, so what is compared is measured in alternating rounds: the catalogs'
servers answer the same request one after the other (measure 1), the service and the floor take turns
under wrk (measure 5), and drift hits both sides of each ratio alike.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from http_load import Load  # bench/http_load.py
from market_catalog import MarketVendor, parse_catalog
from market_client import Connection, tree_rss_mb
from market_figures import Indices, Series, Table, compact, time_quotes, wrk_unique_quotes
from market_requests import deadline_request, default_request, varied_requests
from market_servers import Server, catalog_server, floor_server
from quote import synthetic_snapshot  # bench/quote.py

if TYPE_CHECKING:
    from market_plan import Plan

__all__ = [
    "measure_clusters",
    "measure_framework_share",
    "measure_growth",
    "measure_memory",
    "measure_varied",
]

_WARM_UP_QUOTES = 10
_BLOCK = 10  # requests in a row to one server in measure 1
_WRK_ROUNDS = 2


def measure_growth(plan: Plan, table: Table, indices: Indices, servers: Mapping[int, Server]) -> None:
    """Measure 1: rounds of ``_BLOCK`` new default requests to every catalog's server in turn (blocks, so
    that each server's answer is not timed with the CPU caches just filled by another's)."""
    seconds: dict[int, list[float]] = {offers: [] for offers in servers}
    statuses: list[int] = []
    connections = {offers: Connection(server.url) for offers, server in servers.items()}
    taken = indices.take(_WARM_UP_QUOTES + plan.quotes_per_median)
    try:
        for block_start in range(0, len(taken), _BLOCK):
            block = taken[block_start : block_start + _BLOCK]
            for offers, connection in connections.items():
                for index in block:
                    reply = connection.quote(default_request(index))
                    statuses.append(reply.status)
                    if index - taken.start >= _WARM_UP_QUOTES:
                        seconds[offers].append(reply.seconds)
    finally:
        for connection in connections.values():
            connection.close()
    medians_ms = {offers: Series(tuple(values), ()).median_ms for offers, values in seconds.items()}
    small, large = min(medians_ms), max(medians_ms)
    table.add(
        "1",
        f"median unique quote, {large:,} ÷ {small:,} offers",
        f"{medians_ms[large] / medians_ms[small]:.2f}",
        "<= 2",
    )
    for offers, median_ms in sorted(medians_ms.items()):
        table.add(
            "1",
            f"  median at {offers:,} offers ({plan.quotes_per_median} quotes, alternating)",
            f"{median_ms:.1f} ms",
        )
    table.add("1", "  non-200 answers", str(sum(status != 200 for status in statuses)), "0")


def _models(url: str) -> list[str]:
    with Connection(url) as connection:
        reply = connection.request("GET", "/models")
    return [model["id"] for model in json.loads(reply.body)["models"]]


def measure_varied(plan: Plan, table: Table, server: Server) -> None:
    """Measure 2: the seeded mix of request shapes, one at a time."""
    requests = varied_requests(plan.varied_requests, _models(server.url))
    series = time_quotes(server.url, (request for _, request in requests))
    slowest = max(range(len(requests)), key=series.seconds.__getitem__)
    what = f"slowest of {len(requests)} varied requests, {plan.large_offers:,} offers"
    table.add("2", what, f"{series.seconds[slowest] * 1e3:.1f} ms", "<= 20 ms")
    table.add("2", "  p50 / p99", f"{series.median_ms:.1f} / {series.percentile_ms(0.99):.1f} ms")
    table.add("2", "  non-200 answers", str(series.non_200), "0")
    table.add("2", "  answers in which nothing qualified", str(series.empty))
    table.add("2", "  slowest request's shape", requests[slowest][0])
    table.notes.append(f"2: the slowest request: {compact(requests[slowest][1])}")
    if series.first_error:
        table.notes.append(f"2: first non-200 answer: {series.first_error}")
    by_shape: dict[str, list[float]] = {}
    for (shape, _), seconds in zip(requests, series.seconds, strict=True):
        by_shape.setdefault(shape, []).append(seconds * 1e3)
    ranked = sorted(by_shape.items(), key=lambda item: -max(item[1]))
    cells = ", ".join(f"{shape} {max(ms):.0f}/{sorted(ms)[len(ms) // 2]:.0f}" for shape, ms in ranked)
    table.notes.append(f"2: ms by shape, slowest/median: {cells}")


def measure_memory(table: Table, when: str, server: Server, *, target: bool = True) -> None:
    """Measure 4: VmRSS of the server's process tree (granian's main process and its worker)."""
    rss_mb, processes = tree_rss_mb(server.pid)
    what = f"server RSS {when} ({processes} processes)" if target else when
    table.add("4", what, f"{rss_mb:,.0f} MB", *(("<= 300 MB",) if target else ()))


def _rate_row(table: Table, name: str, load: Load, plan: Plan) -> None:
    figures = f"{load.rate:,.0f}/s, p99 {load.p99_ms:.1f} ms"
    table.add(
        "5",
        f"  {name} (wrk -c{plan.wrk_connections}, best of {_WRK_ROUNDS} x {plan.wrk_duration_s} s)",
        figures,
    )


def measure_framework_share(folder: Path, plan: Plan, table: Table, indices: Indices, server: Server) -> None:
    """Measure 5: unique quotes/s against the floor's requests/s, in alternating wrk rounds."""
    with Connection(server.url) as connection:
        body = connection.quote(default_request(indices.take(1).start)).body
    options = {"duration_s": plan.wrk_duration_s, "connections": plan.wrk_connections}
    quotes: list[Load] = []
    floors: list[Load] = []
    with floor_server(folder, body) as floor:
        for _ in range(_WRK_ROUNDS):
            quotes.append(wrk_unique_quotes(server.url, folder, indices, **options))
            floors.append(wrk_unique_quotes(floor.url, folder, indices, **options))
    best_quotes, best_floor = max(quotes, key=lambda load: load.rate), max(floors, key=lambda load: load.rate)
    what = f"unique quotes/s ÷ framework floor req/s, {plan.small_offers:,} offers"
    table.add("5", what, f"{best_quotes.rate / best_floor.rate:.3f}", ">= 0.15")
    _rate_row(table, "unique POST /quote", best_quotes, plan)
    _rate_row(table, "floor POST /quote", best_floor, plan)
    table.add("5", "  response bytes (the floor answers the same)", f"{len(body):,} B")
    table.add(
        "5", "  wrk errors (non-2xx, socket)", str(sum(load.errors for load in (*quotes, *floors))), "0"
    )


def measure_clusters(folder: Path, plan: Plan, table: Table, vendors: Sequence[MarketVendor]) -> None:
    """Measure 3: unique deadline requests over node-hour clusters selling up to 1,024 nodes."""
    offers = parse_catalog(vendors)
    started = time.perf_counter()
    synthetic_snapshot(offers)
    tables_ms = (time.perf_counter() - started) * 1e3
    with catalog_server(folder / "clusters", vendors) as server:
        first = time_quotes(server.url, [deadline_request(0)])
        time_quotes(server.url, map(deadline_request, range(1, 1 + _WARM_UP_QUOTES)))
        start = 1 + _WARM_UP_QUOTES
        series = time_quotes(server.url, map(deadline_request, range(start, start + plan.quotes_per_median)))
    what = f"median unique deadline quote, {len(offers)} clusters up to 1,024 nodes"
    table.add("3", what, f"{series.median_ms:.2f} ms", "<= 3 ms")
    table.add("3", "  first quote after start-up", f"{first.median_ms:.1f} ms")
    table.add("3", "  snapshot tables built (in-process, once per version)", f"{tables_ms:.1f} ms")
    table.add(
        "3",
        "  non-200 answers; answers in which nothing qualified",
        f"{series.non_200 + first.non_200}; {series.empty}",
        "0",
    )

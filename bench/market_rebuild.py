"""``bench/market.py``'s measure 6: quote latency while a Redis-backed server rebuilds its snapshot.

A private ``redis-server`` is seeded by ``gpuquote refresh``; ``gpuquote serve`` reads it. Production
gives the server a CPU of its own (deploy/k8s: a 1-CPU limit) and runs the refresh in a CronJob pod, so
here the server is pinned to one CPU and Redis, the refresh and the client to the other.
One request is always in flight (``SteadyLoad``); after ``Plan.steady_s`` seconds every feed is rewritten
with every price 5 % up and the refresh runs. The window is from its start until the first answer that
names the store's version after it; the refresh writes vendor by vendor, each write a new version, so
the server may rebuild more than once inside the window.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import redis
from market_catalog import MarketVendor, write_feeds
from market_client import Sample, SteadyLoad, percentile
from market_figures import Indices, Table
from market_requests import default_request
from market_servers import catalog_server, feeds_env, private_redis, refresh

if TYPE_CHECKING:
    from market_plan import Plan

__all__ = ["measure_rebuild"]

_PRICE_MOVE = 1.05  # every price up 5 %: inside the quarantine's change ratio (0.6), so all are served
_VERSION_KEY = "gpuquote:{prices}:version"  # DESIGN.md's Redis layout, default namespace
_NEW_VERSION_TIMEOUT_S = 300.0


def _p99_ms(samples: Sequence[Sample]) -> float:
    return percentile([sample.seconds for sample in samples], 0.99) * 1e3


def _wait_for_version(load: SteadyLoad, version: int) -> Sample:
    deadline = time.monotonic() + _NEW_VERSION_TIMEOUT_S
    while time.monotonic() < deadline:
        served = [
            sample for sample in load.samples if sample.version is not None and sample.version >= version
        ]
        if served:
            return min(served, key=lambda sample: sample.started_s)
        time.sleep(0.05)
    raise TimeoutError(f"the server did not serve version {version} in {_NEW_VERSION_TIMEOUT_S} s")


def _seed(folder: Path, env: dict[str, str]) -> tuple[float, str]:
    """The first refresh into the empty Redis: its seconds and summary (a failed vendor is reported, not
    fatal: the service serves the others)."""
    started = time.perf_counter()
    log = folder / "seed-refresh.log"
    refresh(env, log).wait()
    return time.perf_counter() - started, _refresh_summary(log)


def _cpus() -> tuple[int | None, int | None]:
    """The server's CPU and the one for everything else (Redis, the refresh, the client), as production
    gives the server a CPU of its own (deploy: a 1-CPU limit) and runs the refresh in another pod."""
    cpus = sorted(os.sched_getaffinity(0))
    return (cpus[0], cpus[1]) if len(cpus) >= 2 else (None, None)


@contextmanager
def _on_cpu(cpu: int | None) -> Iterator[None]:
    """This thread, and the threads it starts meanwhile, on ``cpu``."""
    before = os.sched_getaffinity(0)
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


@dataclass(frozen=True)
class Window:
    """A steady load's samples around one refresh, and the refresh's times (``time.monotonic``)."""

    samples: list[Sample]
    refresh_started: float
    refresh_ended: float
    new_version_served: float  # when the first answer naming the refresh's last version arrived
    refresh_summary: str
    seed_s: float
    seed_summary: str

    def before(self) -> list[Sample]:
        return [sample for sample in self.samples if sample.started_s < self.refresh_started]

    def during(self, end: float | None = None) -> list[Sample]:
        start, end = self.refresh_started, self.new_version_served if end is None else end
        return [sample for sample in self.samples if start <= sample.started_s <= end]


def _refresh_summary(log: Path) -> str:
    """The refresh's closing line (vendors, failed, offers) and each distinct failure's reason."""
    lines = log.read_text(encoding="utf-8").splitlines()
    summary = next((line for line in reversed(lines) if " vendors, " in line and " failed" in line), "?")
    reasons = Counter(
        re.sub(r"vendor:\S+", "vendor:<id>", line.split("previous offers: ", 1)[1])
        for line in lines
        if "FAILED, kept" in line
    )
    return summary + "".join(f"; {count} x {reason}" for reason, count in sorted(reasons.items()))


def _window(folder: Path, plan: Plan, first_index: int, vendors: Sequence[MarketVendor]) -> Window:
    """Steady load on a Redis-backed server, then every price moved and refreshed meanwhile."""
    server_cpu, other_cpu = _cpus()
    with private_redis(folder, other_cpu) as redis_url, _on_cpu(other_cpu):
        env = feeds_env(folder, vendors, redis_url)
        seed_s, seed_summary = _seed(folder, env)
        with catalog_server(folder, vendors, redis_url, server_cpu) as server:
            write_feeds(folder, vendors, price_factor=_PRICE_MOVE)  # the server reads Redis, not the feeds
            load = SteadyLoad(server.url, lambda index: default_request(first_index + index))
            load.start()
            time.sleep(plan.steady_s)
            refresh_started = time.monotonic()
            log = folder / "moved-refresh.log"
            refresh(env, log, cpu=other_cpu).wait()
            refresh_ended = time.monotonic()
            new_version = int(redis.Redis.from_url(redis_url).get(_VERSION_KEY) or 0)
            served = _wait_for_version(load, new_version)
            samples = load.stop()
    served_at = served.started_s + served.seconds
    return Window(
        samples, refresh_started, refresh_ended, served_at, _refresh_summary(log), seed_s, seed_summary
    )


def measure_rebuild(
    folder: Path, plan: Plan, table: Table, indices: Indices, vendors: Sequence[MarketVendor]
) -> None:
    """Measure 6: quote p99 from a refresh's start until the new version is served, over the p99 before."""
    folder = folder / "redis"
    folder.mkdir()
    window = _window(folder, plan, indices.take(10**7).start, vendors)
    before, during = window.before(), window.during()
    offers = sum(len(vendor.rows) for vendor in vendors)
    table.add(
        "6",
        f"quote p99 during a {offers:,}-offer rebuild ÷ before",
        f"{_p99_ms(during) / _p99_ms(before):.2f}",
        "<= 2",
    )
    table.add(
        "6", f"  p99 before ({len(before)} quotes in {plan.steady_s:.0f} s)", f"{_p99_ms(before):.1f} ms"
    )
    most_ms = max(sample.seconds for sample in during) * 1e3
    table.add("6", f"  p99 / max during ({len(during)} quotes)", f"{_p99_ms(during):.1f} / {most_ms:.1f} ms")
    while_refreshing = window.during(window.refresh_ended)
    after = [sample for sample in during if sample.started_s > window.refresh_ended]
    table.add("6", f"  p99 while the refresh ran ({len(while_refreshing)}) / after, until served ({len(after)})",
              f"{_p99_ms(while_refreshing):.1f} / {_p99_ms(after):.1f} ms")  # fmt: skip
    refresh_s, served_s = (
        window.refresh_ended - window.refresh_started,
        window.new_version_served - window.refresh_started,
    )
    table.add(
        "6", "  refresh ran / new version served, from its start", f"{refresh_s:.1f} / {served_s:.1f} s"
    )
    table.add("6", "  versions answered in the window", str(len({sample.version for sample in during})))
    table.add("6", "  non-200 answers", str(sum(sample.status != 200 for sample in window.samples)), "0")
    failed = re.search(r"(\d+) failed", window.refresh_summary)
    table.add("6", f"  vendors the refresh failed (of {len(vendors)})", failed[1] if failed else "?", "0")
    table.notes.append(f"6: the refresh with every price moved: {window.refresh_summary}")
    table.notes.append(f"6: the seeding refresh ({window.seed_s:.1f} s): {window.seed_summary}")
    server_cpu, other_cpu = _cpus()
    if server_cpu is not None:
        table.notes.append(
            f"6: the server on CPU {server_cpu}; Redis, the refresh and the client on CPU {other_cpu}"
        )

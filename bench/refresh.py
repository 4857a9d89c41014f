"""Benchmark of a refresh's heaviest path: a big vendor price sheet through ``sheet_csv`` into the store.

Run: ``.venv/bin/python bench/refresh.py [--rows 100000] [--runs 3] [--encoding gbk] [--redis-url URL]``

A sheet of ``--rows`` rows (GBK by default, as vendors send them; every billing model, the usual GPU
spellings, one row in 1,000 bad) is generated in memory, then timed, best of ``--runs``:

- baseline: polars parsing the same CSV (UTF-8, every cell as text), the floor nothing can beat;
- normalize: ``parse_sheet_csv``: decoding, vectorized validation, one ``Offer`` per good row;
- normalize + store: the same, then ``write_vendor`` into a fresh ``MemoryPriceStore`` (every offer new,
  so a history entry each) and again into the same store (steady state: prices unchanged, no history);
- with ``--redis-url``: the first write alone (offers, status and version in one MULTI/EXEC, then one
  history entry per offer in pipelined chunks; target >= 250,000 rows/s), then the same two writes as
  above into ``RedisPriceStore``, each under a throwaway namespace whose keys are deleted afterwards
  (the Redis is never flushed); and Redis memory per offer after one first write: the price data
  (``MEMORY USAGE`` of the vendor key) and the history (``MEMORY USAGE`` of a sample of its keys), with
  ``used_memory``'s growth for the whole.

Rows/s and the ratio to the baseline are printed per stage, then peak memory: the process's peak RSS
(polars allocates outside Python) and the Python heap's peak during one normalization (tracemalloc).
Target on a 2-core machine: >= 100,000 rows/s normalized and stored (memory store, first write).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import sys
import time
import tracemalloc
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from service.store.redis import RedisPriceStore, connect_redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.base import AdapterContext, FetchResult
from adapters.sheet_csv import parse_sheet_csv
from schemas.vendor import VendorConfig, VendorStatus
from service.store.base import PriceStore
from service.store.memory import MemoryPriceStore

TARGET_ROWS_PER_S = 100_000
# A new vendor's first write into Redis (every offer new, so a history entry each), normalizing excluded.
TARGET_REDIS_WRITE_ROWS_PER_S = 250_000
VENDOR = VendorConfig(
    id="bench-sheet", name="Bench sheet vendor", region="jiangsu", city="suzhou", format="sheet_csv"
)
# (spelling in the sheet, typical ¥ per card-hour)
GPU_SPELLINGS = (
    ("RTX 4090", 1.98),
    ("NVIDIA GeForce RTX 4090", 2.1),
    ("4090D", 1.8),
    ("RTX 3090", 1.2),
    ("A100 80G", 6.7),
    ("A100-PCIE-40GB", 5.5),
    ("A800-SXM4-80GB", 6.5),
    ("H800 80G", 15.0),
    ("H20", 7.0),
    ("L20", 3.8),
)
# (计费方式, cards, price multiplier of the card-hour price)
BILLING = (
    ("按卡时", 8, 1.0),
    ("按小时", 4, 1.05),
    ("多卡打包", 4, 4 * 0.92),
    ("包日", 1, 24 * 0.85),
    ("包周", 8, 168 * 8 * 0.8),
    ("包月", 1, 720 * 0.74),
)


def generate_sheet(rows: int, *, encoding: str, seed: int = 11) -> bytes:
    """A vendor sheet of ``rows`` rows; one in 1,000 has a price the vendor forgot (面议)."""
    rng = random.Random(seed)
    lines = ["规格编号,型号,卡数,单价(元),计费方式,库存,互联"]
    for index in range(rows):
        gpu, card_hour_cny = GPU_SPELLINGS[index % len(GPU_SPELLINGS)]
        billing, cards, multiplier = BILLING[rng.randrange(len(BILLING))]
        price = "面议" if index % 1000 == 999 else f"{card_hour_cny * multiplier * rng.uniform(0.8, 1.2):.2f}"
        interconnect = "NVLink" if "SXM" in gpu else rng.choice(("PCIe", ""))
        lines.append(f"sku-{index:06d},{gpu},{cards},{price},{billing},{rng.randrange(64)},{interconnect}")
    return ("\r\n".join(lines) + "\r\n").encode(encoding)


def _context() -> AdapterContext:
    return AdapterContext()


def _best_of(runs: int, work: Callable[[], Awaitable[object]]) -> float:
    """Seconds of the fastest of ``runs`` runs of ``work``."""
    best_s = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        asyncio.run(_awaited(work))
        best_s = min(best_s, time.perf_counter() - started)
    return best_s


async def _awaited(work: Callable[[], Awaitable[object]]) -> None:
    await work()


def _status(result: FetchResult) -> VendorStatus:
    return VendorStatus(
        vendor=VENDOR.id,
        last_success_at=datetime.now(UTC),
        offer_count=len(result.offers),
        rows_dropped=len(result.rejected),
        drop_reasons=result.rejected_by_reason(),
    )


def _report(label: str, rows: int, seconds: float, baseline_s: float) -> float:
    rows_per_s = rows / seconds
    print(
        f"  {label:<34} {seconds * 1e3:9.1f} ms {rows_per_s:12,.0f} rows/s  {baseline_s / seconds:6.2f}x baseline"
    )
    return rows_per_s


async def _memory_store() -> PriceStore:
    return MemoryPriceStore()


async def _normalize_and_store(
    sheet: bytes, make_store: Callable[[], Awaitable[PriceStore]], *, writes: int
) -> None:
    store = await make_store()
    try:
        for _ in range(writes):
            result = parse_sheet_csv(sheet, VENDOR, _context(), source="bench")
            await store.write_vendor(VENDOR.id, result.offers, _status(result))
    finally:
        await store.aclose()


def bench(sheet: bytes, rows: int, runs: int, encoding: str, redis_url: str | None) -> float:
    utf8_sheet = sheet.decode(encoding).encode()
    result = parse_sheet_csv(sheet, VENDOR, _context(), source="bench")
    print(
        f"sheet: {rows:,} rows, {len(sheet) / 1e6:.1f} MB {encoding}; {len(result.offers):,} offers, "
        f"{len(result.rejected):,} rows dropped {result.rejected_by_reason()}"
    )

    async def baseline() -> None:
        pl.read_csv(utf8_sheet, infer_schema=False)

    async def normalize() -> None:
        parse_sheet_csv(sheet, VENDOR, _context(), source="bench")

    baseline_s = _best_of(runs, baseline)
    _report("baseline: polars read_csv", rows, baseline_s, baseline_s)
    _report("normalize (sheet_csv)", rows, _best_of(runs, normalize), baseline_s)
    stored_rows_per_s = _report(
        "normalize + memory store, first",
        rows,
        _best_of(runs, lambda: _normalize_and_store(sheet, _memory_store, writes=1)),
        baseline_s,
    )
    steady_s = _best_of(runs, lambda: _normalize_and_store(sheet, _memory_store, writes=2))
    first_s = _best_of(runs, lambda: _normalize_and_store(sheet, _memory_store, writes=1))
    _report("normalize + memory store, unchanged", rows, max(steady_s - first_s, 1e-9), baseline_s)
    if redis_url is not None:
        _bench_redis(sheet, rows, runs, redis_url, baseline_s)
    return stored_rows_per_s


def _bench_redis(sheet: bytes, rows: int, runs: int, redis_url: str, baseline_s: float) -> None:

    namespace = f"gpuquote-bench-{uuid.uuid4().hex[:12]}"

    async def redis_store() -> PriceStore:
        # A fresh namespace per run: the first write finds no previous offers, as in a new deployment.
        return RedisPriceStore(
            connect_redis(redis_url, timeout_s=30.0), namespace=f"{namespace}-{uuid.uuid4().hex[:6]}"
        )

    result = parse_sheet_csv(sheet, VENDOR, _context(), source="bench")
    status = _status(result)

    async def write_only() -> None:
        store = await redis_store()
        try:
            await store.write_vendor(VENDOR.id, result.offers, status)
        finally:
            await store.aclose()

    try:
        asyncio.run(_memory_per_offer(redis_url, f"{namespace}-memory", result, status))
        write_s = _best_of(runs, write_only)
        _report("redis store write alone, first", rows, write_s, baseline_s)
        verdict = "meets" if rows / write_s >= TARGET_REDIS_WRITE_ROWS_PER_S else "BELOW"
        print(
            f"    {verdict} the target of {TARGET_REDIS_WRITE_ROWS_PER_S:,} rows/s for the first Redis write"
        )
        first_s = _best_of(runs, lambda: _normalize_and_store(sheet, redis_store, writes=1))
        _report("normalize + redis store, first", rows, first_s, baseline_s)
        steady_s = _best_of(runs, lambda: _normalize_and_store(sheet, redis_store, writes=2))
        _report("normalize + redis store, unchanged", rows, max(steady_s - first_s, 1e-9), baseline_s)
    finally:
        asyncio.run(_delete_namespace(redis_url, namespace))


async def _memory_per_offer(
    redis_url: str, namespace: str, result: FetchResult, status: VendorStatus
) -> None:
    client = connect_redis(redis_url, timeout_s=30.0)
    store = RedisPriceStore(client, namespace=namespace)
    try:
        used_before = int((await client.info("memory"))["used_memory"])
        await store.write_vendor(VENDOR.id, result.offers, status)
        used = int((await client.info("memory"))["used_memory"]) - used_before
        prices = await client.memory_usage(f"{namespace}:{{prices}}:vendor:{VENDOR.id}", samples=0) or 0
        sample = result.offers[:: max(1, len(result.offers) // 1000)]
        history = [
            await client.memory_usage(f"{namespace}:{{prices}}:history:{o.id}", samples=0) or 0
            for o in sample
        ]
        offers = len(result.offers)
        print(
            f"  redis memory per offer, first write: prices {prices / offers:,.0f} B, history "
            f"{sum(history) / len(history):,.0f} B (one entry), used_memory +{used / offers:,.0f} B"
        )
    finally:
        await client.aclose()


async def _delete_namespace(redis_url: str, namespace: str) -> None:

    client = connect_redis(redis_url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{namespace}-*", count=1000)]
        for start in range(0, len(keys), 1000):
            await client.delete(*keys[start : start + 1000])
    finally:
        await client.aclose()


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 1e6


def _python_heap_peak_mb(work: Callable[[], Awaitable[object]]) -> float:
    tracemalloc.start()
    asyncio.run(_awaited(work))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def peak_memory(sheet: bytes) -> None:
    """Memory of one normalize + store, measured before the timed runs so earlier peaks do not hide it.

    RSS first (tracemalloc's own bookkeeping would inflate it), then the Python heap's peak with
    tracemalloc: normalization alone, then with the store write.
    """
    rss_before_mb = _rss_mb()
    asyncio.run(_normalize_and_store(sheet, _memory_store, writes=1))
    # ru_maxrss is the process's high-water mark, in KiB on Linux.
    rss_growth_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6 - rss_before_mb

    async def normalize() -> None:
        parse_sheet_csv(sheet, VENDOR, _context(), source="bench")

    normalize_mb = _python_heap_peak_mb(normalize)
    stored_mb = _python_heap_peak_mb(lambda: _normalize_and_store(sheet, _memory_store, writes=1))
    print(
        f"memory, one normalize + memory store: peak RSS +{rss_growth_mb:,.0f} MB (polars and Python); "
        f"Python heap peak {normalize_mb:,.0f} MB normalizing, {stored_mb:,.0f} MB with the store write"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--encoding", choices=("gbk", "utf-8"), default="gbk")
    parser.add_argument(
        "--redis-url", help="also write into RedisPriceStore at this URL (a throwaway namespace)"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when below the target")
    args = parser.parse_args(argv)
    sheet = generate_sheet(args.rows, encoding=args.encoding)
    peak_memory(sheet)
    stored_rows_per_s = bench(sheet, args.rows, args.runs, args.encoding, args.redis_url)
    verdict = "meets" if stored_rows_per_s >= TARGET_ROWS_PER_S else "BELOW"
    print(
        f"normalized and stored: {stored_rows_per_s:,.0f} rows/s, {verdict} the target of {TARGET_ROWS_PER_S:,}"
    )
    if args.check and stored_rows_per_s < TARGET_ROWS_PER_S:
        sys.exit(1)


if __name__ == "__main__":
    main()

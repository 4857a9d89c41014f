"""Benchmark of ``POST /quote``: the engine alone, then the HTTP server under load against ``GET /health``.

Run: ``.venv/bin/python bench/quote.py [--quotes 2000] [--requests 3000] [--concurrency 32]``

1. Engine only: a synthetic catalog of 2,000 offers over 10 GPU models and both regions, every pricing
   variant; the median and p99 time of ``build_quote`` for a default request (no card counts: every count
   each offer sells, up to 512 cards, and the combined package-plus-hourly plans).
2. HTTP: a uvicorn server in a subprocess on a free loopback port, its store filled with the same
   catalog; an httpx async client sends a bounded number of requests to ``POST /quote`` and to
   ``GET /health``; requests/s and p50/p99 latency of each, and their ratio.

Targets on a 2-core machine: engine median ≤ 1 ms; /quote throughput ≥ 1/3 of /health's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import msgspec
import uvicorn

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from schemas.offer import (
    BundlePricing,
    CardHourPricing,
    NodeHourPricing,
    Offer,
    Pricing,
    TermPeriod,
    TermPricing,
)
from schemas.quote import QuoteRequest, Workload
from schemas.vendor import VendorStatus
from service.quote import QuoteOptions, Snapshot, build_quote
from service.quote._tables import build_offer_tables

NOW = datetime.now(UTC)
# (gpu id, memory GB, typical ¥ per card-hour)
GPUS = (
    ("rtx4090", 24, 2.0),
    ("rtx4090d", 24, 1.8),
    ("rtx3090", 24, 1.2),
    ("l20", 48, 3.8),
    ("l40s", 48, 5.0),
    ("a100-40g", 40, 5.5),
    ("a100-80g", 80, 6.7),
    ("a800-80g", 80, 6.5),
    ("h20", 96, 7.0),
    ("h800", 80, 15.0),
)
REGIONS = (("shenzhen", "shenzhen"), ("jiangsu", "suzhou"), ("jiangsu", "nanjing"), ("jiangsu", "wuxi"))


def _pricing(rng: random.Random, card_hour_cny: float) -> Pricing:
    price = round(card_hour_cny * rng.uniform(0.7, 1.5), 2)
    roll = rng.random()
    if roll < 0.55:
        return CardHourPricing(
            cny_per_card_hour=price,
            max_cards=rng.choice((4, 8, 8, 10)),
            granularity_s=rng.choice((1, 60, 3600)),
        )
    if roll < 0.7:
        return NodeHourPricing(
            cny_per_node_hour=round(price * 8 * 0.95, 2),
            cards_per_node=8,
            min_nodes=rng.choice((1, 2)),
            max_nodes=rng.choice((4, 16, None)),
            network_premium_cny_per_node_hour=rng.choice((0.0, 8.0, 24.0)),
            storage_cny_per_node_hour=rng.choice((0.0, 6.0)),
        )
    if roll < 0.85:
        cards = rng.choice((2, 4, 8))
        return BundlePricing(
            cards=cards, cny_per_bundle_hour=round(price * cards * 0.92, 2), max_bundles=8 // cards
        )
    period: TermPeriod = rng.choice(("day", "week", "month"))
    hours = {"day": 24, "week": 168, "month": 720}[period]
    cards = rng.choice((1, 8))
    return TermPricing(period=period, cny_per_period=round(price * hours * cards * 0.75, 2), cards=cards)


def synthetic_offers(count: int = 2_000, seed: int = 7) -> list[Offer]:
    """``count`` offers over 10 GPU models, both regions and every pricing variant (deterministic)."""
    rng = random.Random(seed)
    offers = []
    for index in range(count):
        gpu, memory_gb, card_hour_cny = GPUS[index % len(GPUS)]
        region, city = REGIONS[rng.randrange(len(REGIONS))]
        vendor = f"bench-{region[:2]}-{index % 97:02d}"
        offers.append(
            Offer(
                id=f"{vendor}:{gpu}-{index}",
                vendor=vendor,
                sku=f"{gpu}-{index}",
                region=region,
                city=city,
                gpu=gpu,
                gpu_memory_gb=memory_gb,
                interconnect=rng.choice(("pcie", "nvlink", "infiniband", "roce")),
                pricing=_pricing(rng, card_hour_cny),
                fetched_at=NOW - timedelta(minutes=rng.uniform(1, 600)),
                source="bench",
                available_cards=rng.choice((None, None, 8, 16, 64)),
            )
        )
    return offers


def synthetic_snapshot(offers: Sequence[Offer]) -> Snapshot:
    offers = tuple(offers)
    vendors = sorted({offer.vendor for offer in offers})
    return Snapshot(
        version=1,
        offers=offers,
        offers_by_id={offer.id: offer for offer in offers},
        statuses={vendor: VendorStatus(vendor=vendor, last_success_at=NOW) for vendor in vendors},
        tables=build_offer_tables(offers),
        built_at=NOW,
        oldest_fetched_at=min(offer.fetched_at for offer in offers),
    )


BENCH_REQUEST = QuoteRequest(
    workload=Workload(gpu_hours=48, reference_gpu="rtx4090", model_params_b=7, task="lora"),
    time_value_cny_per_hour=20,
)


def _percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def bench_engine(offer_count: int, runs: int) -> None:
    offers = synthetic_offers(offer_count)
    started = time.perf_counter()
    snapshot = synthetic_snapshot(offers)
    build_ms = (time.perf_counter() - started) * 1e3
    options = QuoteOptions(now=NOW, price_max_age_s=86_400)
    for _ in range(50):
        build_quote(snapshot, BENCH_REQUEST, options=options)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        build_quote(snapshot, BENCH_REQUEST, options=options)
        samples.append(time.perf_counter() - started)
    response = build_quote(snapshot, BENCH_REQUEST, options=options)
    counts = snapshot.tables.plan_counts
    print(f"engine: {offer_count} offers ({len(snapshot.tables.plans)} combined plans), every count sold "
          f"({', '.join(map(str, counts))}), {runs} runs")  # fmt: skip
    print(f"  snapshot tables built in {build_ms:.1f} ms (once per store version)")
    print(
        f"  build_quote median {statistics.median(samples) * 1e3:.3f} ms, "
        f"p99 {_percentile(samples, 0.99) * 1e3:.3f} ms (target: median <= 1 ms)"
    )
    print(f"  {len(response.quotes)} quotes returned; excluded {msgspec.structs.asdict(response.excluded)}")


def serve(port: int, offer_count: int) -> None:
    """Run the app on ``port`` with its embedded store filled with the synthetic catalog (subprocess)."""

    store = MemoryPriceStore()

    async def fill() -> None:
        by_vendor: dict[str, list[Offer]] = {}
        for offer in synthetic_offers(offer_count):
            by_vendor.setdefault(offer.vendor, []).append(offer)
        for vendor, offers in by_vendor.items():
            await store.write_vendor(vendor, offers, VendorStatus(vendor=vendor, last_success_at=NOW))

    asyncio.run(fill())
    app = create_app(services=build_services(Settings(), store=store))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _load(
    client: httpx.AsyncClient, method: str, path: str, body: bytes | None, requests: int, concurrency: int
) -> tuple[float, list[float]]:
    """Send ``requests`` requests, ``concurrency`` at a time; wall time and each request's latency."""
    latencies: list[float] = []
    remaining = iter(range(requests))
    headers = {"content-type": "application/json"} if body else None

    async def worker() -> None:
        for _ in remaining:
            started = time.perf_counter()
            response = await client.request(method, path, content=body, headers=headers)
            latencies.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:200]}")

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started, latencies


async def _bench_http_client(base_url: str, requests: int, concurrency: int) -> None:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    quote_body = msgspec.json.encode(BENCH_REQUEST)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=httpx.Timeout(30.0)) as client:
        for _ in range(300):  # the server imports, fills its store and starts: a few seconds
            try:
                if (await client.get("/health")).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
        await _load(client, "POST", "/quote", quote_body, 200, concurrency)  # warm up
        results = {}
        for name, method, path, body in (("GET /health", "GET", "/health", None),
                                         ("POST /quote", "POST", "/quote", quote_body)):  # fmt: skip
            wall_s, latencies = await _load(client, method, path, body, requests, concurrency)
            results[name] = requests / wall_s
            print(
                f"  {name:<12} {requests / wall_s:8.0f} req/s   p50 {_percentile(latencies, 0.5) * 1e3:6.2f} ms"
                f"   p99 {_percentile(latencies, 0.99) * 1e3:6.2f} ms"
            )
    ratio = results["POST /quote"] / results["GET /health"]
    print(f"  /quote throughput is {ratio:.2f} of /health's (target: >= 0.33)")
    print("  (one httpx client process shares the cores with the server: it caps both rates)")


_WRK_SCRIPT = """
wrk.method = "{method}"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[{body}]]
"""
# Every request a different job length: each is a quote-cache miss and runs the engine.
_WRK_VARIED_SCRIPT = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  return wrk.format(nil, nil, nil, string.format([[{template}]], 1 + math.random() * 500))
end
"""
_HOURS_MARKER = 12345.678
_WRK_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def _wrk_latency_ms(output: str, percentile: str) -> float:
    match = re.search(rf"^\s*{percentile}%\s+([0-9.]+)(us|ms|s)\s*$", output, re.MULTILINE)
    return float(match[1]) * _WRK_UNITS_MS[match[2]] if match else float("nan")


def _bench_http_wrk(base_url: str, duration_s: int, concurrency: int) -> None:
    """The same comparison with wrk, a C load generator that leaves most of the CPU to the server."""
    print(f"http (wrk, 1 thread, {concurrency} connections, {duration_s} s per endpoint):")
    rates = {}
    with tempfile.TemporaryDirectory() as folder:
        varied = msgspec.structs.replace(
            BENCH_REQUEST, workload=msgspec.structs.replace(BENCH_REQUEST.workload, gpu_hours=_HOURS_MARKER)
        )
        template = msgspec.json.encode(varied).decode().replace(str(_HOURS_MARKER), "%.4f")
        scripts = {
            "GET /health": _WRK_SCRIPT.format(method="GET", body=""),
            "POST /quote": _WRK_SCRIPT.format(
                method="POST", body=msgspec.json.encode(BENCH_REQUEST).decode()
            ),
            "POST /quote*": _WRK_VARIED_SCRIPT.format(template=template),
        }
        for name, lua in scripts.items():
            path = name.split()[1].rstrip("*")
            script = Path(folder) / "request.lua"
            script.write_text(lua, encoding="utf-8")
            command = ["wrk", "-t1", f"-c{concurrency}", f"-d{duration_s}s", "--latency", "-s", str(script)]
            output = subprocess.run(
                [*command, base_url + path], capture_output=True, text=True, check=True
            ).stdout
            rate_match = re.search(r"Requests/sec:\s+([0-9.]+)", output)
            errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
            rates[name] = float(rate_match[1]) if rate_match else 0.0
            print(
                f"  {name:<12} {rates[name]:8.0f} req/s   p50 {_wrk_latency_ms(output, '50'):6.2f} ms"
                f"   p99 {_wrk_latency_ms(output, '99'):6.2f} ms   non-2xx {errors[1] if errors else 0}"
            )
    health = rates["GET /health"]
    print(
        f"  /quote  is {rates['POST /quote'] / health:.2f} of /health's throughput: one repeated request (cache hits)"
    )
    print(
        f"  /quote* is {rates['POST /quote*'] / health:.2f} of /health's throughput: a new job each request"
    )


def bench_http(offer_count: int, requests: int, concurrency: int) -> None:
    port = _free_port()
    print(f"http: uvicorn (1 worker) on 127.0.0.1:{port}, {offer_count} offers, {requests} requests each, "
          f"{concurrency} concurrent, client in this process")  # fmt: skip
    server = subprocess.Popen(  # the server gets its own process (and core) apart from the client
        [sys.executable, __file__, "--serve", str(port), "--offers", str(offer_count)],
        env={**os.environ, "GPUQUOTE_RATE_LIMIT_PER_MINUTE": "0"},
    )
    try:
        asyncio.run(_bench_http_client(f"http://127.0.0.1:{port}", requests, concurrency))
        if shutil.which("wrk"):
            _bench_http_wrk(f"http://127.0.0.1:{port}", duration_s=10, concurrency=concurrency)
        else:
            print("  (install wrk for a load generator that does not compete with the server for the CPU)")
    finally:
        server.terminate()
        server.wait(timeout=10)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--offers", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=2_000, help="engine-only quotes to time")
    parser.add_argument("--requests", type=int, default=3_000, help="HTTP requests per endpoint")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.offers)
        return
    bench_engine(args.offers, args.runs)
    if not args.skip_http:
        bench_http(args.offers, args.requests, args.concurrency)


if __name__ == "__main__":
    main()

"""Benchmark of what production serves: ``gpuquote serve`` under wrk, every figure a ratio to a baseline.

Run: ``.venv/bin/python bench/http_load.py [--duration 5] [--connections 32]`` (needs ``wrk``; ``make bench``
installs it). The machine is shared and noisy, so every baseline is measured in the same run.

1. Server choice: ``GET /health`` and unique ``POST /quote`` (reference catalog) of ``gpuquote serve
   --server S``, and ``GET /`` of a bare Litestar app (one route, no middleware) served by the same
   ``run_server`` settings, for S in granian and uvicorn (uvloop + httptools).
2. Production path: ``gpuquote serve`` (the default server, JSON access logs at INFO, the request
   middleware with its metrics, the rate limiter on with a limit no run reaches) over (a) the bundled
   20-offer reference catalog and (b) a 2,000-offer synthetic catalog (a vendors file pointing at static
   feeds written to a temp folder). wrk sends ``POST /quote`` with a new ``gpu_hours`` on every request,
   its warm-up included (each run its own range of values, so the per-process quote cache never answers)
   and, in the same run, ``GET /health`` to the same server.
3. The engine alone: the median ``build_quote`` over the 2,000 offers for a default request (every card
   count each offer sells), against the time of one ``/health`` request (1 / its req/s).

wrk targets 127.0.0.1 only, one thread, ``--connections`` connections, ``--duration`` seconds per endpoint
after a one-second warm-up. The servers' logs go to a temp file; the access lines are counted as a check
that logging was on.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import msgspec
from litestar import Litestar, get

from schemas.offer import BundlePricing, CardHourPricing, NodeHourPricing, Offer, TermPricing
from schemas.quote import QuoteRequest, Workload
from service.cli.serve import DEFAULT_SERVER, SERVERS, run_server
from service.quote import QuoteOptions, build_quote
from service.settings import Settings

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from quote import NOW, synthetic_offers, synthetic_snapshot  # noqa: E402  (bench/quote.py)

GPUQUOTE = str(Path(sys.executable).with_name("gpuquote"))
# Every request a different job length (1 + index / 1e9 hours, from the index the script starts at): a
# quote-cache miss that runs the engine.
_UNIQUE_QUOTE_LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local index = {first}
request = function()
  index = index + 1
  return wrk.format(nil, nil, nil, string.format([[{template}]], 1 + index / 1e9))
end
"""
# Indices one script may use: more requests than any wrk run here sends.
_INDICES_PER_SCRIPT = 10_000_000
_HOURS_MARKER = 12345.678
_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}
# The production request shape without card_counts: every count each offer sells (the default plans).
DEFAULT_REQUEST = QuoteRequest(
    workload=Workload(gpu_hours=_HOURS_MARKER, reference_gpu="rtx4090", model_params_b=7, task="lora"),
    time_value_cny_per_hour=20,
)


@get("/", sync_to_thread=False)
def _hello() -> dict[str, str]:
    return {"hello": "world"}


def bare_app() -> Litestar:
    """The floor: one route, no middleware, no logging config of its own (run_server's applies)."""
    return Litestar(route_handlers=[_hello], logging_config=None, openapi_config=None)


@dataclass(frozen=True)
class Load:
    rate: float
    p50_ms: float
    p99_ms: float
    errors: int


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _latency_ms(output: str, percentile: str) -> float:
    match = re.search(rf"^\s*{percentile}%\s+([0-9.]+)(us|ms|s)\s*$", output, re.MULTILINE)
    return float(match[1]) * _UNITS_MS[match[2]] if match else float("nan")


def wrk(url: str, *, duration_s: int, connections: int, scripts: Callable[[], Path] | None = None) -> Load:
    """One bounded wrk run against a loopback URL (after a one-second warm-up); ``scripts`` gives each
    of the two runs a script of its own (``UniqueQuoteScripts``: bodies the other never sends)."""
    if not url.startswith("http://127.0.0.1:"):
        raise ValueError(f"wrk targets loopback only, not {url}")

    def options() -> list[str]:
        return ["-s", str(scripts())] if scripts else []

    subprocess.run(
        ["wrk", "-t1", f"-c{connections}", "-d1s", *options(), url], capture_output=True, check=True
    )
    command = ["wrk", "-t1", f"-c{connections}", f"-d{duration_s}s", "--latency", *options(), url]
    return parse_wrk(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def parse_wrk(output: str) -> Load:
    """The rate, median, p99 and errors (non-2xx answers and socket errors) of wrk's ``--latency`` output."""
    rate = re.search(r"Requests/sec:\s+([0-9.]+)", output)
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    errors = int(non_2xx[1]) if non_2xx else 0
    errors += sum(int(n) for n in socket_errors.groups()) if socket_errors else 0
    return Load(float(rate[1]) if rate else 0.0, _latency_ms(output, "50"), _latency_ms(output, "99"), errors)


@contextmanager
def served(command: Sequence[str], env: Mapping[str, str], log: Path) -> Iterator[str]:
    """A server subprocess on a free loopback port; yields its base URL once it answers."""
    with served_process(command, env, log) as (base_url, _process):
        yield base_url


@contextmanager
def served_process(
    command: Sequence[str], env: Mapping[str, str], log: Path
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``served``, also yielding the server's process (its id for memory figures)."""
    port = _free_port()
    with log.open("ab") as log_file:
        process = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port)],
            env={**os.environ, **env, "PYTHONPATH": f"{BENCH_DIR}{os.pathsep}{REPO}"},
            stdout=subprocess.DEVNULL,
            stderr=log_file,
        )
        base_url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"{command} exited with {process.returncode}; see {log}")
                try:
                    if httpx.get(
                        base_url + "/health" if "serve" in command else base_url, timeout=1
                    ).is_success:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{command} did not answer in 60 s")
                time.sleep(0.1)
            yield base_url, process
        finally:
            process.terminate()
            process.wait(timeout=20)


def _row(name: str, load: Load) -> None:
    print(
        f"  {name:<44} {load.rate:8.0f} req/s   p50 {load.p50_ms:7.2f} ms   p99 {load.p99_ms:7.2f} ms"
        f"   errors {load.errors}"
    )


@dataclass
class UniqueQuoteScripts:
    """wrk scripts sending ``DEFAULT_REQUEST`` with a new ``gpu_hours`` on every request: each script
    made starts at indices no earlier one used, so no body of a run (warm-up included) is sent twice."""

    folder: Path
    next_index: int = 0

    def __call__(self) -> Path:
        first, self.next_index = self.next_index, self.next_index + _INDICES_PER_SCRIPT
        template = msgspec.json.encode(DEFAULT_REQUEST).decode().replace(str(_HOURS_MARKER), "%.9f")
        return unique_quote_script(self.folder / f"unique_quote_{first}.lua", template, first)


def unique_quote_script(path: Path, body_template: str, first_index: int) -> Path:
    """A wrk script at ``path`` POSTing ``body_template`` with its one ``%.9f`` (the job's hours) set to
    1 + index / 1e9, the index counting up from ``first_index``: a new body every request."""
    lua = _UNIQUE_QUOTE_LUA.replace("{template}", body_template).replace("{first}", str(first_index))
    path.write_text(lua, encoding="utf-8")
    return path


def _compare(what: str, rates: Mapping[str, float]) -> None:
    best = max(rates, key=rates.__getitem__)
    others = ", ".join(
        f"{best} / {name} = {rates[best] / rate:.2f}" for name, rate in rates.items() if name != best
    )
    print(f"  {what}: {others}")


def bench_servers(folder: Path, duration_s: int, connections: int) -> dict[str, float]:
    """Under each server: /health and unique POST /quote of the service, / of the bare app."""
    print(f"server choice (wrk 1 thread, {connections} connections, {duration_s} s each):")
    env = {"GPUQUOTE_LOG_LEVEL": "INFO"}
    scripts = UniqueQuoteScripts(folder)
    health: dict[str, float] = {}
    quotes: dict[str, float] = {}
    for server in SERVERS:
        log = folder / f"{server}.log"
        with served([GPUQUOTE, "serve", "--server", server], env, log) as url:
            service = wrk(url + "/health", duration_s=duration_s, connections=connections)
            unique = wrk(url + "/quote", duration_s=duration_s, connections=connections, scripts=scripts)
        with served([sys.executable, __file__, "--serve-bare", server], env, log) as url:
            bare = wrk(url + "/", duration_s=duration_s, connections=connections)
        _row(f"{server}: gpuquote GET /health", service)
        _row(f"{server}: gpuquote POST /quote, new job each", unique)
        _row(f"{server}: bare Litestar GET /", bare)
        print(f"  {server}: gpuquote /health / bare route = {service.rate / bare.rate:.2f}")
        health[server], quotes[server] = service.rate, unique.rate
    _compare("/health", health)
    _compare("unique /quote", quotes)
    print(f"  the default is {DEFAULT_SERVER}")
    return health


def _raw_pricing(offer: Offer) -> dict[str, object]:
    pricing = offer.pricing
    if isinstance(pricing, CardHourPricing):
        return {"kind": "card_hour", "price_cny": pricing.cny_per_card_hour, "max_cards": pricing.max_cards,
                "granularity_s": pricing.granularity_s}  # fmt: skip
    if isinstance(pricing, NodeHourPricing):
        return {"kind": "node_hour", "price_cny": pricing.cny_per_node_hour,
                "cards_per_node": pricing.cards_per_node, "min_nodes": pricing.min_nodes,
                "max_nodes": pricing.max_nodes, "network_premium_cny": pricing.network_premium_cny_per_node_hour,
                "storage_cny": pricing.storage_cny_per_node_hour}  # fmt: skip
    if isinstance(pricing, BundlePricing):
        return {"kind": "bundle", "cards": pricing.cards, "price_cny": pricing.cny_per_bundle_hour,
                "max_bundles": pricing.max_bundles}  # fmt: skip
    assert isinstance(pricing, TermPricing)
    return {
        "kind": "term",
        "period": pricing.period,
        "price_cny": pricing.cny_per_period,
        "cards": pricing.cards,
    }


def write_catalog(folder: Path, offers: Sequence[Offer]) -> Path:
    """A vendors file with one static feed per (region, city) of ``offers``; returns the file's path."""
    by_place: dict[tuple[str, str], list[Offer]] = {}
    for offer in offers:
        by_place.setdefault((offer.region, offer.city), []).append(offer)
    entries = []
    for (region, city), place_offers in sorted(by_place.items()):
        vendor = f"bench-{city}"
        rows = [
            {
                "sku": offer.sku,
                "gpu": offer.gpu,
                "interconnect": offer.interconnect,
                "available_cards": offer.available_cards,
                "pricing": _raw_pricing(offer),
            }
            for offer in place_offers
        ]
        (folder / f"{vendor}.json").write_text(json.dumps({"offers": rows}), encoding="utf-8")
        entries.append(
            f'[[vendors]]\nid = "{vendor}"\nname = "{vendor}"\nregion = "{region}"\ncity = "{city}"\n'
            f'format = "static"\npath = "{folder / vendor}.json"\n'
        )
    path = folder / "vendors.toml"
    path.write_text("\n".join(entries), encoding="utf-8")
    return path


def _access_lines(log: Path) -> int:
    return sum('"gpuquote.access"' in line for line in log.read_text(encoding="utf-8").splitlines())


def bench_production(folder: Path, duration_s: int, connections: int) -> float:
    """Unique POST /quote against GET /health of the production server; the 2,000-offer /health rate."""
    scripts = UniqueQuoteScripts(folder)
    catalogs = {
        "reference catalog (20 offers)": {},
        "synthetic catalog (2,000 offers)": {
            "GPUQUOTE_VENDORS_FILE": str(write_catalog(folder, synthetic_offers(2_000)))
        },
    }
    print(f"production path: gpuquote serve ({DEFAULT_SERVER}, JSON access log, metrics, rate limiter on)")
    health_rate = 0.0
    for name, extra in catalogs.items():
        # The limiter runs on every POST /quote; the limit is out of reach of one client address.
        env = {"GPUQUOTE_LOG_LEVEL": "INFO", "GPUQUOTE_RATE_LIMIT_PER_MINUTE": "100000000", **extra}
        log = folder / f"production-{len(extra)}.log"
        with served([GPUQUOTE, "serve"], env, log) as url:
            offers = httpx.get(url + "/offers", params={"limit": 1}, timeout=10).json()
            health = wrk(url + "/health", duration_s=duration_s, connections=connections)
            unique = wrk(url + "/quote", duration_s=duration_s, connections=connections, scripts=scripts)
        print(f"  {name}: {offers.get('total', '?')} offers served")
        _row("GET /health", health)
        _row("POST /quote, a new job every request", unique)
        print(f"  unique POST /quote / GET /health = {unique.rate / health.rate:.3f}")
        print(f"  access lines logged: {_access_lines(log):,}")
        health_rate = health.rate
    return health_rate


def bench_engine(health_rate: float, runs: int) -> None:
    snapshot = synthetic_snapshot(synthetic_offers(2_000))
    options = QuoteOptions(now=NOW, price_max_age_s=86_400)
    requests = [
        msgspec.structs.replace(
            DEFAULT_REQUEST,
            workload=msgspec.structs.replace(DEFAULT_REQUEST.workload, gpu_hours=1 + i / 1000),
        )
        for i in range(runs + 20)
    ]
    for request in requests[:20]:
        build_quote(snapshot, request, options=options)
    samples = []
    for request in requests[20:]:
        started = time.perf_counter()
        build_quote(snapshot, request, options=options)
        samples.append(time.perf_counter() - started)
    median_s = statistics.median(samples)
    health_s = 1 / health_rate
    print(f"engine: build_quote over 2,000 offers, default plans, {runs} unique requests")
    print(
        f"  median {median_s * 1e3:.3f} ms; one /health request {health_s * 1e3:.3f} ms (1 / {health_rate:.0f});"
        f" engine median / one /health = {median_s / health_s:.2f}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run (5-10)")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--engine-runs", type=int, default=500)
    parser.add_argument("--serve-bare", choices=SERVERS, help=argparse.SUPPRESS)
    parser.add_argument("--host", default="127.0.0.1", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=8000, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_bare:
        settings = Settings.from_env()
        run_server("http_load:bare_app", server=args.serve_bare, host=args.host, port=args.port, workers=1,
                   settings=settings)  # fmt: skip
        return
    if not 1 <= args.duration <= 10:
        parser.error("--duration: 1 to 10 seconds (bounded runs)")
    if shutil.which("wrk") is None:
        sys.exit("wrk not found: `make system-deps` installs it (apt-get install wrk)")
    with tempfile.TemporaryDirectory(prefix="gpuquote-bench-") as temp:
        folder = Path(temp)
        bench_servers(folder, args.duration, args.connections)
        health_rate = bench_production(folder, args.duration, args.connections)
        bench_engine(health_rate, args.engine_runs)


if __name__ == "__main__":
    main()

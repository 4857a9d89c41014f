"""The fault matrix's stack and callers (``bench/faults.py``): a private Redis, the loopback vendor server,
``gpuquote serve`` replicas, the requests sent to them while a fault is applied and the checks after."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.adapters.fake_vendor import FakeVendor
from tests.builders import card_hour_feed
from tests.net import free_port
from tests.servers import GPUQUOTE, RedisServer

ADMIN_KEY = "matrix-admin-key"
TOKEN = "matrix-vendor-token-5f3e"
VENDORS = {"a": {f"a-{i}": 5.0 + i / 10 for i in range(7)}, "b": {f"b-{i}": 6.0 + i / 10 for i in range(6)}}
SHIPPED_REDIS = ("--maxmemory", "200mb", "--maxmemory-policy", "noeviction")


@dataclass
class Row:
    name: str
    tried: int = 0
    errors: int = 0
    leaks: int = 0
    lost: int = 0
    note: str = ""


@dataclass
class Replica:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self, timeout_s: float = 20) -> float:
        """SIGTERM, then the seconds it took to exit."""
        started = time.monotonic()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return time.monotonic() - started


@dataclass
class Tally:
    """What callers saw: statuses, and answers carrying something private."""

    statuses: Counter[int] = field(default_factory=Counter)
    leaks: int = 0
    unexpected: int = 0

    @property
    def tried(self) -> int:
        return sum(self.statuses.values())


class Stack:
    """A private Redis, the loopback vendor server, and ``gpuquote serve`` replicas on them."""

    def __init__(
        self, folder: Path, *, redis_args: Sequence[str] = SHIPPED_REDIS, env: Mapping[str, str] | None = None
    ) -> None:
        self.folder = folder
        self.redis = RedisServer(*redis_args)
        self.vendor = FakeVendor()
        self.env = dict(env or {})
        self.replicas: list[Replica] = []
        for vendor, prices in VENDORS.items():
            self.vendor.publish(f"/{vendor}.json", card_hour_feed(prices))
        self.vendors_file = self.write_vendors(list(VENDORS))

    def write_vendors(self, vendors: Iterable[str], *, name: str = "vendors.toml", retries: int = 0) -> Path:
        path = self.folder / name
        path.write_text(
            "".join(
                f'[[vendors]]\nid = "{vendor}"\nname = "{vendor}"\nregion = "jiangsu"\ncity = "suzhou"\n'
                f'format = "static"\nurl = "{self.vendor.url(f"/{vendor}.json")}"\ntoken_env = "MATRIX_TOKEN"\n'
                f"timeout_s = 3\nretries = {retries}\n\n"
                for vendor in vendors
            ),
            encoding="utf-8",
        )
        return path

    def __enter__(self) -> Stack:
        self.redis.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for replica in self.replicas:
            replica.stop(timeout_s=5)
        self.vendor.close()
        self.redis.close()

    def replica_env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return {
            **os.environ,
            "GPUQUOTE_REDIS_URL": self.redis.url,
            "GPUQUOTE_VENDORS_FILE": str(self.vendors_file),
            "GPUQUOTE_ADMIN_API_KEYS": ADMIN_KEY,
            "GPUQUOTE_RATE_LIMIT_PER_MINUTE": "1000000",
            "MATRIX_TOKEN": TOKEN,
            **self.env,
            **(extra or {}),
        }

    def start_replica(self, extra: Mapping[str, str] | None = None, *, wait_s: float = 60) -> Replica:
        port = free_port()
        log = self.folder / f"replica-{len(self.replicas)}-{port}.log"
        process = subprocess.Popen(
            [GPUQUOTE, "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=self.replica_env(extra),
            stdout=subprocess.DEVNULL,
            stderr=log.open("wb"),
        )
        replica = Replica(f"http://127.0.0.1:{port}", process, log)
        self.replicas.append(replica)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"replica exited: {log.read_text(errors='replace')[-800:]}")
            try:
                if httpx.get(replica.url + "/health", timeout=1).status_code == 200:
                    return replica
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise TimeoutError("replica did not answer /health")

    def markers(self) -> list[str]:
        """Text that must not reach a caller or a log: the Redis address, a token, an echoed command."""
        return [f"127.0.0.1:{self.redis.port}", f":{self.redis.port}", TOKEN, "Command # ", "b'\\x"]

    def leaks_in_logs(self) -> int:
        time.sleep(0.1)  # the log writer flushes every 50 ms
        text = "".join(replica.log.read_text(encoding="utf-8", errors="replace") for replica in self.replicas)
        return sum(text.count(marker) for marker in self.markers())

    def non_json_log_lines(self) -> int:
        import json  # noqa: PLC0415

        bad = 0
        for replica in self.replicas:
            for line in replica.log.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    json.loads(line)
                except ValueError:
                    bad += bool(line.strip())
        return bad


QUOTE = {"workload": {"gpu_hours": 48}, "card_counts": [1, 4]}


async def probe(
    replicas: Sequence[Replica],
    seconds: float,
    markers: Sequence[str],
    *,
    concurrency: int = 8,
    expected_503: bool = False,
    routes: Sequence[tuple[str, str, Any]] | None = None,
) -> Tally:
    """Callers on every replica for ``seconds``: quotes (each a new job), offers, vendors, readiness,
    history. A 503 counts as unexpected unless ``expected_503`` (no snapshot, or history with Redis away)."""
    tally = Tally()
    routes = routes or [
        ("POST", "/quote", None),
        ("GET", "/offers?limit=1000", None),
        ("GET", "/vendors", None),
        ("GET", "/ready", None),
        ("GET", "/offers/a:a-1/history", None),
    ]
    until = time.monotonic() + seconds
    counter = 0

    async def caller(client: httpx.AsyncClient, replica: Replica) -> None:
        nonlocal counter
        while time.monotonic() < until:
            counter += 1
            method, path, body = routes[counter % len(routes)]
            if method == "POST" and body is None:
                body = {**QUOTE, "workload": {"gpu_hours": 1 + counter / 1000}}
            try:
                response = await client.request(method, replica.url + path, json=body, timeout=10)
            except httpx.HTTPError:
                tally.statuses[0] += 1
                tally.unexpected += 1
                continue
            tally.statuses[response.status_code] += 1
            if response.status_code >= 500 and not (response.status_code == 503 and expected_503):
                tally.unexpected += 1
            tally.leaks += sum(response.text.count(marker) for marker in markers)

    limits = httpx.Limits(max_connections=concurrency * len(replicas) + 4)
    async with httpx.AsyncClient(limits=limits) as client:
        await asyncio.gather(*(caller(client, r) for r in replicas for _ in range(concurrency)))
    return tally


def catalog(replica: Replica) -> dict[str, float]:
    """The replica's offers by id with their price; an offer served twice is a second, unexpected entry."""
    served: dict[str, float] = {}
    for item in httpx.get(replica.url + "/offers?limit=1000", timeout=10).json()["items"]:
        key = item["id"] if item["id"] not in served else f"{item['id']} (again)"
        served[key] = item["pricing"].get("cny_per_card_hour", 0.0)
    return served


def refresh(replica: Replica) -> dict[str, Any]:
    response = httpx.post(replica.url + "/admin/refresh", headers={"X-API-Key": ADMIN_KEY}, timeout=60)
    body: dict[str, Any] = response.json()
    body["status"] = response.status_code
    return body


def expected_catalog(vendors: Iterable[str] = VENDORS) -> dict[str, float]:
    return {f"{vendor}:{sku}": price for vendor in vendors for sku, price in VENDORS[vendor].items()}


def lost(served: Mapping[str, float], expected: Mapping[str, float]) -> int:
    """Offers missing, extra or at another price."""
    keys = set(served) | set(expected)
    return sum(1 for key in keys if served.get(key) != expected.get(key))

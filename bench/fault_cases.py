"""The faults of ``bench/faults.py``, one function each: apply the fault to a fresh stack, send callers
through it, repair, and return the row. Store poisons share one shape (``_poisoned``)."""

from __future__ import annotations

import asyncio
import json
import random
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import msgspec
import redis
from faults import (
    ADMIN_KEY,
    Replica,
    Row,
    Stack,
    catalog,
    expected_catalog,
    lost,
    probe,
    refresh,
)

from tests.builders import card_hour_feed, static_feed, static_row
from tests.servers import GPUQUOTE

Poison = Callable[[redis.Redis], None]
PREFIX = "gpuquote:{prices}:"


def _bump(client: redis.Redis) -> None:
    client.incr(PREFIX + "version")


def _rewrite(client: redis.Redis, change: Callable[[list[Any]], list[Any]]) -> None:
    raw = client.get(PREFIX + "vendor:a")
    assert isinstance(raw, bytes)
    client.set(PREFIX + "vendor:a", msgspec.msgpack.encode(change(msgspec.msgpack.decode(raw))))
    _bump(client)


def _naive_time(offers: list[Any]) -> list[Any]:
    offers[0]["fetched_at"] = "2026-01-01T00:00:00"
    return offers


def _absurd_price(offers: list[Any]) -> list[Any]:
    offers[0]["pricing"]["cny_per_card_hour"] = 1e308
    return offers


def _naive_status(client: redis.Redis) -> None:
    raw = client.hget(PREFIX + "status", "a")
    assert isinstance(raw, bytes)
    status = msgspec.msgpack.decode(raw)
    status["last_success_at"] = "2026-01-01T00:00:00"
    client.hset(PREFIX + "status", "a", msgspec.msgpack.encode(status))
    _bump(client)


def _deleted(key: str) -> Poison:
    def poison(client: redis.Redis) -> None:
        client.delete(PREFIX + key)
        _bump(client)

    return poison


def _lock_without_expiry(client: redis.Redis) -> None:
    client.set(PREFIX + "refresh-lock", b"left-behind")


POISONS: dict[str, Poison] = {
    "poison: naive fetched_at": lambda client: _rewrite(client, _naive_time),
    "poison: naive last_success_at": _naive_status,
    "poison: duplicated offer ids": lambda client: _rewrite(client, lambda offers: offers + offers),
    "poison: price 1e308 in the store": lambda client: _rewrite(client, _absurd_price),
    "missing: status hash deleted": _deleted("status"),
    "missing: one vendor key deleted": _deleted("vendor:a"),
    "lock key without expiry": _lock_without_expiry,
}


def _poisoned(poison: Poison) -> Callable[[Path, float], Row]:
    """Two replicas holding a snapshot; the poison; a third replica started on it; callers on all three;
    a refresh; then every replica must serve the whole catalog."""

    def case(folder: Path, seconds: float) -> Row:
        with Stack(folder) as stack:
            old = [stack.start_replica(), stack.start_replica()]
            client = redis.Redis.from_url(stack.redis.url)
            poison(client)
            client.close()
            fresh = stack.start_replica()
            tally = asyncio.run(probe([*old, fresh], seconds, stack.markers()))
            during = len(catalog(fresh))
            repaired = refresh(old[0])
            after = [catalog(replica) for replica in stack.replicas]
            missing = sum(lost(served, expected_catalog()) for served in after)
            note = f"new replica served {during}/13 during; refresh ok={repaired.get('ok')}"
            return Row(
                "", tally.tried + 1, tally.unexpected, tally.leaks + stack.leaks_in_logs(), missing, note
            )

    return case


def sku_churn(folder: Path, seconds: float) -> Row:
    """A vendor renaming 5,000 SKUs each refresh, Redis at 24 MB noeviction: every refresh must succeed."""
    with Stack(folder, redis_args=("--maxmemory", "24mb", "--maxmemory-policy", "noeviction")) as stack:
        stack.vendors_file = stack.write_vendors(["churn"])
        stack.vendor.publish("/churn.json", card_hour_feed({f"r0-{i}": 2 + i % 40 / 10 for i in range(5000)}))
        replica = stack.start_replica()
        failed, served = 0, 0
        for round_ in range(1, 9):
            stack.vendor.publish(
                "/churn.json", card_hour_feed({f"r{round_}-{i}": 2 + i % 40 / 10 for i in range(5000)})
            )
            report = refresh(replica)
            failed += int(report["status"] != 200 or not report.get("ok"))
            page = httpx.get(replica.url + "/offers?vendor=churn&limit=1").json()
            latest = httpx.get(replica.url + f"/offers/churn:r{round_}-4999").status_code == 200
            served = page["total"] if latest else 0
        vendors = httpx.get(replica.url + "/admin/vendors", headers={"X-API-Key": ADMIN_KEY}).text
        memory = redis.Redis.from_url(stack.redis.url).info("memory")
        leaks = sum(vendors.count(marker) for marker in stack.markers()) + stack.leaks_in_logs()
        note = f"{failed} of 8 refreshes failed; Redis {memory['used_memory'] / 2**20:.1f} of 24 MB"
        return Row("", 8, failed, leaks, 5000 - served, note)


def removed_vendor(folder: Path, seconds: float) -> Row:
    """b leaves the vendors file: a replica on the new file must not list or quote it, nor keep it."""
    with Stack(folder) as stack:
        stack.start_replica()
        only_a = stack.write_vendors(["a"], name="only-a.toml")
        fresh = stack.start_replica({"GPUQUOTE_VENDORS_FILE": str(only_a)})
        tally = asyncio.run(probe([fresh], seconds, stack.markers()))
        ghost_before = lost(catalog(fresh), expected_catalog(["a"]))
        report = refresh(fresh)
        later = stack.start_replica({"GPUQUOTE_VENDORS_FILE": str(only_a)})
        ghost_after = lost(catalog(later), expected_catalog(["a"]))
        note = f"removed by the refresh: {report.get('removed')}"
        return Row("", tally.tried + 1, tally.unexpected, tally.leaks, ghost_before + ghost_after, note)


def empty_redis_cronjob(folder: Path, seconds: float) -> Row:
    """Redis back empty, b's feed failing, the CronJob refills: every replica must serve a and b."""
    with Stack(folder) as stack:
        old = [stack.start_replica(), stack.start_replica()]
        stack.redis.stop()
        stack.redis.start()
        stack.vendor.withdraw("/b.json")
        job = subprocess.run(
            [GPUQUOTE, "refresh"], check=False, env=stack.replica_env(), capture_output=True, timeout=60
        )
        tally = asyncio.run(probe(old, seconds, stack.markers()))
        fresh = stack.start_replica()
        deadline = time.monotonic() + 10
        while len(catalog(fresh)) < 13 and time.monotonic() < deadline:
            time.sleep(0.1)
        missing = sum(lost(catalog(replica), expected_catalog()) for replica in [*old, fresh])
        note = f"CronJob exit {job.returncode}; a replica started after it serves {len(catalog(fresh))}/13"
        return Row("", tally.tried + 1, tally.unexpected, tally.leaks + stack.leaks_in_logs(), missing, note)


def _hostile_bodies(count: int) -> list[bytes]:
    huge = b"9" * 5000
    fixed = [
        b'{"workload": {"gpu_hours": ' + huge + b"}}",
        b'{"workload": {"gpu_hours": 48}, "limit": 1, "limit": ' + huge + b"}",
        b'{"workload": {"gpu_hours": 48}, "x": [' + huge + b"]}",
        b'{"workload": {"gpu_hours": 48, "cross_node_factor": 5e-324}, "card_counts": [16]}',
        b'{"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090", "speed_ratios": {"h800": 1e-300}}}',
        b'{"workload": {"gpu_hours": 1e308}}',
        b'{"workload": {"gpu_hours": 1}, "deadline_hours": 5e-324}',
        b'{"workload": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"workload": {"gpu_hours": 1}, "\\u006cimit": 1, "limit": 2}',
        b"", b"{", b"null", b"[]", b'"x"', b"\xff\xfe",
    ]  # fmt: skip
    rng = random.Random(21)
    seed = json.dumps(
        {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090"}, "card_counts": [1, 8]}
    ).encode()
    for _ in range(count):
        body = bytearray(seed)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(body))
            body[at : at + 1] = rng.choice(
                [b"9" * 400, b"1e308", b"-", b"[", b"{", b'"', b"\\u0000", b"5e-324", b""]
            )
        fixed.append(bytes(body))
    return fixed


def hostile_bodies(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        replica = stack.start_replica()
        statuses: dict[int, int] = {}
        errors = leaks = 0
        with httpx.Client() as client:
            for body in _hostile_bodies(400):
                response = client.post(
                    replica.url + "/quote", content=body, headers={"Content-Type": "application/json"}
                )
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                errors += response.status_code >= 500
                leaks += sum(response.text.count(marker) for marker in stack.markers())
        note = "statuses " + ", ".join(f"{status}×{n}" for status, n in sorted(statuses.items()))
        return Row("", sum(statuses.values()), errors, leaks + stack.leaks_in_logs(), 0, note)


def absurd_feed_prices(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        rows = [static_row("4090", 8.0), static_row("huge", 1e308), static_row("tiny", 1e-300)]
        stack.vendor.publish("/a.json", static_feed(rows))
        replica = stack.start_replica()
        tally = asyncio.run(probe([replica], seconds, stack.markers()))
        served = catalog(replica)
        absurd = sum(1 for offer_id in served if offer_id in {"a:huge", "a:tiny"})
        quote = httpx.post(
            replica.url + "/quote", json={"workload": {"gpu_hours": 48}, "card_counts": [1]}
        ).json()
        free = sum(1 for q in quote.get("quotes", []) if q["cost_cny"]["expected"] == 0)
        (status,) = [v for v in httpx.get(replica.url + "/vendors").json()["vendors"] if v["vendor"] == "a"]
        note = f"dropped {status.get('drop_reasons', {})}; quotes at ¥0.00: {free}"
        return Row("", tally.tried + 1, tally.unexpected, tally.leaks, absurd + free, note)


def quarantine_jitter(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        stack.vendor.publish("/a.json", card_hour_feed({"4090": 40.0}))
        replica = stack.start_replica()
        held_back = 0
        for step, factor in enumerate((0.1, 0.11, 0.1, 0.11, 0.1, 0.11, 0.1)):
            price = round(40 * factor, 2)
            stack.vendor.publish("/a.json", card_hour_feed({"4090": price}))
            refresh(replica)
            held_back += int(step > 0 and catalog(replica).get("a:4090") != price)
        return Row(
            "", 7, 0, 0, held_back, f"refreshes past the second that served the old price: {held_back}"
        )


def frozen_history(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        replica = stack.start_replica()
        stack.redis.freeze()
        slowest, tried, errors = 0.0, 0, 0
        try:
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                started = time.monotonic()
                response = httpx.get(replica.url + "/offers/a:a-1/history", timeout=30)
                slowest = max(slowest, time.monotonic() - started)
                tried += 1
                errors += response.status_code not in {200, 503}
        finally:
            stack.redis.thaw()
        return Row(
            "",
            tried,
            errors + int(slowest > 1.0),
            0,
            0,
            f"slowest {slowest:.2f} s (deadline 0.5 s), 503 expected",
        )


def _metric(text: str, name: str) -> float:
    return sum(
        float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith(name) and not line.startswith("#")
    )


_WRK_QUOTES = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, "/quote", nil, string.format('{"workload": {"gpu_hours": %.3f}}', 1 + counter / 1000))
end
"""


def _load(folder: Path, replica: Replica, seconds: float, markers: list[str]) -> tuple[int, int, int]:
    """(requests, non-2xx, leaks) of 256 concurrent callers sending new quotes: wrk when installed (the
    load a Python client cannot make), else the probe."""
    if shutil.which("wrk") is None:
        tally = asyncio.run(
            probe([replica], seconds, markers, concurrency=256, routes=[("POST", "/quote", None)])
        )
        return tally.tried, tally.unexpected, tally.leaks
    script = folder / "quotes.lua"
    script.write_text(_WRK_QUOTES, encoding="utf-8")
    command = ["wrk", "-t2", "-c256", f"-d{max(int(seconds), 5)}s", "-s", str(script), replica.url]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    requests = re.search(r"(\d+) requests in", output)
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return int(requests[1]) if requests else 0, int(non_2xx[1]) if non_2xx else 0, 0


def busy_healthy_redis(folder: Path, seconds: float) -> Row:
    """256 concurrent callers, Redis healthy: no store error, no in-process rate counts, ready throughout."""
    with Stack(folder) as stack:
        replica = stack.start_replica()
        before = httpx.get(replica.url + "/metrics").text
        readiness: list[str] = []
        warned: list[int] = []

        def watch() -> None:  # what a probe and a caller see meanwhile
            with httpx.Client(timeout=10) as client:
                for step in range(30):
                    readiness.append(client.get(replica.url + "/ready").json()["status"])
                    body = {"workload": {"gpu_hours": 3 + step / 100}, "card_counts": [1]}
                    warnings = client.post(replica.url + "/quote", json=body).json().get("warnings", [])
                    warned.append(sum("unreachable" in warning for warning in warnings))
                    time.sleep(max(seconds, 5) / 40)

        watcher = threading.Thread(target=watch)
        watcher.start()
        tried, non_2xx, leaks = _load(folder, replica, seconds, stack.markers())
        watcher.join()
        after = httpx.get(replica.url + "/metrics").text
        store_errors = _metric(after, "gpuquote_store_errors_total") - _metric(
            before, "gpuquote_store_errors_total"
        )
        local = _metric(after, "gpuquote_rate_limit_local_total") - _metric(
            before, "gpuquote_rate_limit_local_total"
        )
        degraded = sum(status != "ready" for status in readiness)
        note = (
            f"store errors +{store_errors:.0f}, local rate counts +{local:.0f}, "
            f"/ready not ready {degraded}/{len(readiness)}, quotes warning unreachable {sum(warned)}"
        )
        anomalies = int(store_errors + local) + degraded + sum(warned)
        return Row("", tried + 60, non_2xx + anomalies, leaks, 0, note)


def _half_sent(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(
        b"POST /quote HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 999\r\n\r\n{"
    )
    return sock


def half_sent_bodies(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        replica = stack.start_replica()
        sockets = [_half_sent(replica.url) for _ in range(10)]
        held = 0
        for sock in sockets:
            sock.settimeout(15)
            try:
                held += not sock.recv(64).startswith(b"HTTP/1.1 408")
            except TimeoutError:
                held += 1
            sock.close()
        more = [_half_sent(replica.url) for _ in range(10)]
        time.sleep(0.2)
        stop_s = replica.stop(timeout_s=60)
        for sock in more:
            sock.close()
        note = f"sockets not cut off within 15 s: {held}; SIGTERM with 10 half-sent bodies: exit in {stop_s:.1f} s"
        return Row("", 20, held + int(stop_s > 30), 0, 0, note)


def paginated_feed(folder: Path, seconds: float) -> Row:
    """100 pages, each 60 % of FEED_MAX_BYTES (1 MiB here): the feed fails at its second page."""
    cap = 2**20
    with Stack(folder, env={"GPUQUOTE_FEED_MAX_BYTES": str(cap)}) as stack:
        region = {"region_name": "r", "inventory": 1, "price": 550}
        regions = [region] * (int(0.6 * cap) // len(json.dumps(region)))
        for page in range(1, 101):
            gpus = [{"gpu_name": "RTX 4090", "gpu_count": 8, "regions": regions}]
            stack.vendor.serve(
                f"/p?page={page}", json.dumps({"data": gpus, "next": f"/p?page={page + 1}"}).encode()
            )
        stack.vendors_file.write_text(
            stack.vendors_file.read_text()
            + f'[[vendors]]\nid = "pages"\nname = "pages"\nregion = "jiangsu"\n'
            f'city = "suzhou"\nformat = "per_second_json"\nurl = "{stack.vendor.url("/p?page=1")}"\nretries = 0\n',
            encoding="utf-8",
        )
        replica = stack.start_replica()
        report = refresh(replica)
        (pages,) = [v for v in report["vendors"] if v["vendor"] == "pages"]
        fetched = sum(stack.vendor.hits(f"/p?page={page}") for page in range(1, 101))
        note = f"pages fetched per refresh: {fetched / 2:.0f}; vendor failed: {not pages['ok']}"
        return Row("", 1, 0, 0, lost(catalog(replica), expected_catalog()), note)


def slow_vendor_startup(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        stack.vendor.serve("/slow.json", status=429, headers={"Retry-After": "99999"})
        stack.vendors_file = stack.write_vendors(["a", "slow"], retries=2)
        started = time.monotonic()
        replica = stack.start_replica(wait_s=90)
        healthy_s = time.monotonic() - started
        served = catalog(replica)
        note = f"first /health 200 after {healthy_s:.1f} s (startup probe: 60 s)"
        return Row("", 1, int(healthy_s > 60), 0, lost(served, expected_catalog(["a"])), note)


def redis_down_no_snapshot(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        stack.redis.stop()
        replica = stack.start_replica()
        tally = asyncio.run(probe([replica], seconds, stack.markers(), expected_503=True))
        note = f"503 by design (no snapshot): {tally.statuses[503]}"
        return Row("", tally.tried, tally.unexpected, tally.leaks + stack.leaks_in_logs(), 0, note)


def stderr_json(folder: Path, seconds: float) -> Row:
    with Stack(folder) as stack:
        replica = stack.start_replica()
        bodies = _hostile_bodies(50)
        with httpx.Client() as client:
            for body in bodies:
                client.post(
                    replica.url + "/quote", content=body, headers={"Content-Type": "application/json"}
                )
            heads = [client.head(replica.url + path).status_code for path in ("/", "/health")]
        bad = stack.non_json_log_lines()
        return Row(
            "",
            len(bodies) + 2,
            sum(s != 200 for s in heads),
            0,
            0,
            f"non-JSON stderr lines: {bad}; HEAD: {heads}",
        )


CASES: dict[str, Callable[[Path, float], Row]] = {
    **{name: _poisoned(poison) for name, poison in POISONS.items()},
    "redis memory: SKU churn": sku_churn,
    "vendor removed from the file": removed_vendor,
    "empty Redis, vendor failing, CronJob": empty_redis_cronjob,
    "bodies: huge ints, extremes, fuzz": hostile_bodies,
    "feed prices 1e308 / 1e-300": absurd_feed_prices,
    "quarantine: jittering new level": quarantine_jitter,
    "history with Redis frozen": frozen_history,
    "c=256, Redis healthy": busy_healthy_redis,
    "half-sent bodies, then SIGTERM": half_sent_bodies,
    "100 pages near the feed cap": paginated_feed,
    "start-up, vendor Retry-After 99999": slow_vendor_startup,
    "Redis down, no snapshot": redis_down_no_snapshot,
    "stderr JSON and HEAD": stderr_json,
}

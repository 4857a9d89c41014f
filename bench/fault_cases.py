"""The faults of ``bench/faults.py``, one function each: apply the fault to a fresh stack, send callers
through it, repair, and return the row. Store poisons share one shape (``_poisoned``); the request and
timing faults are in ``bench/fault_edges.py``."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import msgspec
import redis
from fault_edges import (
    busy_healthy_redis,
    frozen_history,
    half_sent_bodies,
    hostile_bodies,
    paginated_feed,
    redis_down_no_snapshot,
    slow_vendor_startup,
    stderr_json,
)
from fault_stack import (
    ADMIN_KEY,
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

"""What ``bench/market.py``'s measures share: the table they print, unique request indices, timed series
of quotes on one connection, and wrk runs with a new quote in every request."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
from http_load import Load, parse_wrk, unique_quote_script  # bench/http_load.py
from market_client import Connection, percentile, recommends
from market_requests import default_request

from schemas.quote import QuoteRequest

__all__ = ["Indices", "Series", "Table", "compact", "progress", "time_quotes", "wrk_unique_quotes"]

_MARKER_HOURS = 12345.678
_STARTED = time.monotonic()


def progress(message: str) -> None:
    """A line on stderr while the run goes (the figures are the table on stdout)."""
    print(f"[{time.monotonic() - _STARTED:6.0f} s] {message}", file=sys.stderr, flush=True)


@dataclass
class Table:
    rows: list[tuple[str, str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, measure: str, what: str, value: str, target: str = "") -> None:
        self.rows.append((measure, what, value, target))

    def print(self, heading: str) -> None:
        print(heading)
        width = max(len(row[1]) for row in self.rows)
        value_width = max(len(row[2]) for row in self.rows)
        print(f"{'#':>2}  {'measure':<{width}}  {'value':>{value_width}}  target")
        for measure, what, value, target in self.rows:
            print(f"{measure:>2}  {what:<{width}}  {value:>{value_width}}  {target}")
        for note in self.notes:
            print(note)


@dataclass
class Indices:
    """Hands out index ranges no earlier call handed out, so every request body of a run is new."""

    next_index: int = 0

    def take(self, count: int) -> range:
        taken = range(self.next_index, self.next_index + count)
        self.next_index += count
        return taken


@dataclass(frozen=True)
class Series:
    seconds: tuple[float, ...]
    statuses: tuple[int, ...]
    first_error: str = ""
    empty: int = 0  # 200 answers in which nothing qualified (no quote recommended)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1e3

    def percentile_ms(self, fraction: float) -> float:
        return percentile(self.seconds, fraction) * 1e3

    @property
    def non_200(self) -> int:
        return sum(status != 200 for status in self.statuses)


def time_quotes(url: str, requests: Iterable[QuoteRequest]) -> Series:
    """Each request in turn on one connection, each timed; the first non-200 body kept to print."""
    seconds, statuses, first_error, empty = [], [], "", 0
    with Connection(url) as connection:
        for request in requests:
            reply = connection.quote(request)
            seconds.append(reply.seconds)
            statuses.append(reply.status)
            if reply.status == 200:
                empty += not recommends(reply.body)
            elif not first_error:
                first_error = f"{reply.status} {reply.body[:300].decode(errors='replace')}"
    return Series(tuple(seconds), tuple(statuses), first_error, empty)


def compact(request: QuoteRequest) -> str:
    """The request as JSON without the fields left out (the shape a reader can replay)."""

    def drop_none(value: object) -> object:
        if isinstance(value, dict):
            return {key: drop_none(item) for key, item in value.items() if item is not None}
        return value

    return msgspec.json.encode(drop_none(msgspec.to_builtins(request))).decode()


def _script(folder: Path, first_index: int) -> Path:
    request = default_request(0)
    marked = msgspec.structs.replace(
        request, workload=msgspec.structs.replace(request.workload, gpu_hours=_MARKER_HOURS)
    )
    template = msgspec.json.encode(marked).decode().replace(str(_MARKER_HOURS), "%.9f")
    return unique_quote_script(folder / f"unique-{first_index}.lua", template, first_index)


def wrk_unique_quotes(
    url: str, folder: Path, indices: Indices, *, duration_s: int, connections: int, warm_up_s: int = 1
) -> Load:
    """wrk's rate, p50, p99 and errors for ``POST /quote`` with a new ``default_request`` each time,
    after a warm-up whose requests are never sent again."""
    if not url.startswith("http://127.0.0.1:"):
        raise ValueError(f"wrk targets loopback only, not {url}")
    per_run = 10_000_000  # more than wrk sends in any run here
    for seconds, latency in ((warm_up_s, []), (duration_s, ["--latency"])):
        script = _script(folder, indices.take(per_run).start)
        command = [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{seconds}s",
            *latency,
            "-s",
            str(script),
            url + "/quote",
        ]
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return parse_wrk(output)

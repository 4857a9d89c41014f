"""Benchmark of ``POST /quote``'s body edge: reading a successful body once against reading it twice.

Run: ``.venv/bin/python bench/body_decode.py [--runs 20000]``

For four valid bodies (the README's example, a typical request with filters and measured speeds, the
largest the schema admits: every list at its length cap, ~20 KB, and the typical one with its Chinese
written as ``\\u`` escapes), median microseconds per body of:

- twice (the edge before): msgspec's typed decode, then ``json.loads`` with an ``object_pairs_hook``
  to find repeated keys, then msgspec encoding the decoded request again for the quote cache's key;
- once (``service.inputs.decode_json_input``): the typed decode, then the keys listed from the bytes
  (``service.documents.repeated_key``; the escaped body walks every token instead); the cache key is the
  bytes as they came.

Each figure is printed with its ratio to the first.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from schemas.quote import QuoteRequest
from service.inputs import decode_json_input

_ENCODER = msgspec.json.Encoder()


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(key)
        found[key] = value
    return found


def read_twice(body: bytes) -> bytes:
    """The edge before: typed decode, the standard parser for duplicate keys, the key re-encoded."""
    request = msgspec.json.decode(body, type=QuoteRequest)
    json.loads(body, object_pairs_hook=_refuse_duplicates)
    return _ENCODER.encode(request)


def read_once(body: bytes) -> bytes:
    decode_json_input(body, QuoteRequest)
    return body


def _bodies() -> dict[str, bytes]:
    example = {
        "workload": {"gpu_hours": 48},
        "gpus": ["rtx4090"],
        "vendors": ["js-suzhou-ref"],
        "pricing": ["card_hour"],
        "card_counts": [1, 4],
    }
    typical = {
        "workload": {
            "gpu_hours": 120,
            "reference_gpu": "rtx4090",
            "speed_ratios": {"h800": 3.2, "a100-80g": 1.7},
            "model": "qwen2.5-72b",
            "task": "lora",
            "communication": "heavy",
            "data_city": "苏州",
            "dataset_gb": 500,
        },
        "regions": ["jiangsu", "shenzhen"],
        "card_counts": [1, 2, 4, 8, 16],
        "deadline_hours": 72,
        "budget_cny": 20000,
        "rank_by": "value",
        "time_value_cny_per_hour": 150,
        "scaling": {"4": [2.8, 3.2], "8": [4.5, 5.5]},
        "lang": "zh",
    }
    names = [f"gpu-name-{index:02d}-" + "x" * 50 for index in range(64)]
    largest = {
        "workload": {"gpu_hours": 1, "speed_ratios": {name[:64]: 1.5 for name in names[:32]}},
        "gpus": names,
        "regions": names,
        "cities": names,
        "vendors": names,
        "card_counts": list(range(1, 65)),
        "scaling": {str(count): [1.0, 1.0] for count in range(1, 65)},
    }
    bodies = {name: json.dumps(body, ensure_ascii=False).encode() for name, body in
              (("example", example), ("typical", typical), ("largest", largest))}  # fmt: skip
    # Python's json.dumps writes 苏州 as \u82cf\u5dde by default: a body with escapes takes the full walk.
    bodies["escaped"] = json.dumps(typical).encode()
    return bodies


def _median_us(work: Callable[[bytes], bytes], body: bytes, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        work(body)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000)
    args = parser.parse_args(argv)
    print(f"median µs per valid body, {args.runs:,} runs each")
    for name, body in _bodies().items():
        assert read_twice(body) and read_once(body)
        runs = args.runs if len(body) < 4096 else max(1, args.runs // 10)
        twice = _median_us(read_twice, body, runs)
        once = _median_us(read_once, body, runs)
        print(
            f"  {name:<8} {len(body):>7,} B   twice {twice:8.1f} µs   once {once:8.1f} µs   "
            f"{once / twice:5.2f}x"
        )


if __name__ == "__main__":
    main()

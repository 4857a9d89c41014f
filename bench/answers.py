"""Digests of the engine's answers to thousands of seeded requests, to show a reshaping changed none.

Run: ``.venv/bin/python bench/answers.py --write answers.txt`` before a change and
``.venv/bin/python bench/answers.py --compare answers.txt`` after it (about two minutes each).

Each line is one answer's SHA-256 (the encoded response, or the refusal's field and reason) and where it
came from: 12 seeded catalogs of 240 to 1,140 offers (``tests/quote/seeded.py``: every pricing kind,
clusters up to 1,024 nodes, stale prices, spot, data fees, packages), each asked 500 seeded requests with
the service's fast paths and again with bound pruning on every table however small; then the varied and
deadline requests of ``bench/market.py`` on its 2,000- and 18,000-offer catalogs, fetch times pinned.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent)]

from market_catalog import market_catalog, parse_catalog  # noqa: E402
from market_requests import deadline_request, varied_requests  # noqa: E402

from adapters.models import NAMED_MODELS  # noqa: E402
from schemas.vendor import VendorStatus  # noqa: E402
from service.quote import FastPaths, QuoteOptions, Snapshot  # noqa: E402
from tests.quote.factories import MAX_AGE_S, NOW  # noqa: E402
from tests.quote.seeded import answers, catalog, requests  # noqa: E402

# (seed, offers, clusters, vendors selling packages)
SEEDED = tuple(
    (seed, 240 + 90 * at, 12 + 4 * (at % 11), 6 + at % 4) for at, seed in enumerate(range(101, 113))
)
SEEDED_REQUESTS = 500
MARKET_SIZES = (2_000, 18_000)
MARKET_VARIED, MARKET_DEADLINES = 120, 40
PATHS = {"service": FastPaths(), "pruned everywhere": FastPaths(prune_from_rows=0)}


def _market_snapshot(offers: int) -> Snapshot:
    pinned = [
        msgspec.structs.replace(offer, fetched_at=NOW) for offer in parse_catalog(market_catalog(offers))
    ]
    statuses = {offer.vendor: VendorStatus(vendor=offer.vendor, last_success_at=NOW) for offer in pinned}
    return Snapshot.of(pinned, statuses, version=offers, built_at=NOW)


def digests() -> Iterator[str]:
    for seed, offers, clusters, packaged in SEEDED:
        snapshot = catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)
        asked = list(requests(seed, SEEDED_REQUESTS, snapshot))
        for name, paths in PATHS.items():
            options = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=paths)
            for at, answer in enumerate(answers(snapshot, asked, options)):
                yield f"{hashlib.sha256(answer).hexdigest()} seeded {seed} {name} {at}"
    models = [model.id for model in NAMED_MODELS]
    for offers in MARKET_SIZES:
        snapshot = _market_snapshot(offers)
        asked = [request for _, request in varied_requests(MARKET_VARIED, models, seed=offers)]
        asked += [deadline_request(index * 37) for index in range(MARKET_DEADLINES)]
        options = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S)
        for at, answer in enumerate(answers(snapshot, asked, options)):
            yield f"{hashlib.sha256(answer).hexdigest()} market {offers} {at}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--write", type=Path, help="write the digests here")
    chosen.add_argument("--compare", type=Path, help="compare with the digests written here")
    args = parser.parse_args(argv)
    started = time.monotonic()
    lines = list(digests())
    if args.write is not None:
        args.write.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{len(lines):,} answers written to {args.write} in {time.monotonic() - started:.0f} s")
        return
    before = args.compare.read_text(encoding="utf-8").splitlines()
    differ = [now for then, now in zip(before, lines, strict=False) if then != now]
    print(f"{len(lines):,} answers in {time.monotonic() - started:.0f} s; {len(before):,} before")
    for line in differ[:20]:
        print(f"differs: {line}")
    if differ or len(before) != len(lines):
        sys.exit(f"{len(differ)} answers differ")
    print("every answer identical")


if __name__ == "__main__":
    main()

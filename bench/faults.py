"""The fault matrix: every fault a red-team pass found, replayed against real processes, one row each.

Run: ``.venv/bin/python bench/faults.py [--only NAME ...] [--seconds 3]``

Each fault runs on its own stack on loopback: a private ``redis-server`` (``--maxmemory 200mb
--maxmemory-policy noeviction``, as ``deploy/k8s/redis.yaml`` ships it, unless the fault needs less), the
loopback vendor server (``tests/adapters/fake_vendor.py``) serving the feeds, and ``gpuquote serve``
replicas (each its own process, JSON logs to a file). While the fault is applied, callers send quotes,
offer and vendor reads, readiness and history requests to every replica; then the stack is repaired (a
refresh) and checked. Per fault it prints:

- ``tried``: requests sent to the replicas (and refreshes asked for);
- ``5xx``: answers >= 500 that the fault should not cause (a 503 the contract promises, such as no
  snapshot held, is listed in the note instead), and refreshes or checks of the fault that failed;
- ``leaks``: answers or log lines naming the Redis address or port, a vendor token, or echoing a Redis
  command's arguments;
- ``lost``: offers a replica should serve after the fault and does not (or serves and should not);
- a note with what the fault's own check measured.

The cases are in ``bench/fault_cases.py``; the stack and the callers in ``bench/fault_stack.py``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fault_cases import CASES
from fault_stack import Row


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="run only the faults with these names")
    parser.add_argument("--seconds", type=float, default=3.0, help="how long callers run per fault")
    args = parser.parse_args(argv)
    print(f"{'fault':<34} {'tried':>7} {'5xx':>5} {'leaks':>6} {'lost':>5}  note")
    totals = Row("total")
    for name, case in CASES.items():
        if args.only and name not in args.only:
            continue
        with tempfile.TemporaryDirectory(prefix="gpuquote-faults-") as folder:
            try:
                row = case(Path(folder), args.seconds)
            except Exception as error:  # a case that cannot run says so in its row
                row = Row(name, errors=1, note=f"CASE FAILED: {error!r}"[:200])
        row.name = name
        for attribute in ("tried", "errors", "leaks", "lost"):
            setattr(totals, attribute, getattr(totals, attribute) + getattr(row, attribute))
        print(
            f"{row.name:<34} {row.tried:>7} {row.errors:>5} {row.leaks:>6} {row.lost:>5}  {row.note}",
            flush=True,
        )
    print(f"{totals.name:<34} {totals.tried:>7} {totals.errors:>5} {totals.leaks:>6} {totals.lost:>5}")


if __name__ == "__main__":
    main()

"""The engine's fast paths, each a shortcut that gives the answers the plain evaluation gives, faster.

``FastPaths()`` (every one on) is what the service runs; ``FastPaths.none()`` is the reference
evaluation: every candidate billed at every bound, combined plans priced combination by combination,
each row's fewest cards meeting a deadline searched on its own, every candidate sorted. A test runs
both over seeded requests and catalogs and compares the answers byte for byte (``tests/quote/
test_fast_paths.py``); ``bench/quote.py --paths`` measures what each one saves.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["FastPaths"]


@dataclass(frozen=True, slots=True)
class FastPaths:
    # Bill only the cells a response can read, counts with few of them cell by cell, and the low and
    # high bounds for the returned quotes alone (``evaluate.layout``, ``evaluate.figures``).
    sparse_billing: bool = True
    # Price a combined plan's combinations that already cover the hours as one cheapest cover
    # (``evaluate.plan_costs``) instead of each on its own.
    plan_pruning: bool = True
    # Each row's fewest cards meeting a deadline by one ``searchsorted`` per speed-up column
    # (``jobs.deadline``) instead of a binary search per row.
    deadline_lookup: bool = True
    # Sort only the candidates that can be in the top ``limit`` (``rank``) instead of all of them.
    top_k: bool = True
    # On a large table, bill only the rows whose lower bounds can reach what the response returns, the
    # rest judged without figures (``evaluate.pruning``), instead of billing every row.
    bound_pruning: bool = True
    # With ``bound_pruning``, read the rows a job's bounds can reach along rows sorted once per rule, memory
    # need and conversion (``evaluate.ordered``) instead of working out every row's bounds.
    row_order: bool = True
    # The rows a table needs before ``bound_pruning`` is worth its bounds (tests set 0 to run it always).
    prune_from_rows: int = 4096

    @classmethod
    def none(cls) -> FastPaths:
        """The reference evaluation: every fast path off."""
        return cls(**{field.name: False for field in fields(cls) if field.type == "bool"})

"""The quote engine: a price snapshot and a request in, ranked, costed quotes out. Pure: no I/O, no clock,
no environment (the caller passes the time and what the store said in ``QuoteOptions``).

    build_quote(Snapshot.of(offers, statuses, version=..., built_at=...), request, options=QuoteOptions(...))

Floors, each importing only the ones below it (``docs/engine.md``)::

    service.quote        this front door
    ├── engine, nearest  one request end to end; the nearest option per limit when nothing fits
    ├── assemble/        the returned quotes: figures, line items, warnings, notes
    ├── rank             top-k by cost, time or value
    ├── evaluate/        every candidate billed and judged in bulk
    ├── resolve          the request's names and limits, its Job
    ├── jobs/            job kinds: how long a job takes on n cards, where it is quoted (JobKind)
    ├── model/           per snapshot: pricing kinds (PricingRule), billing, plans, scaling, memory, tables
    ├── prose/           every sentence in English and Chinese, the summaries (no engine types)
    └── base/            arrays, rounding, the memo mechanism, the fast-path switches
"""

from service.quote.base.money import format_cny
from service.quote.base.paths import FastPaths
from service.quote.engine import QuoteOptions, build_quote, prepare_snapshot
from service.quote.evaluate.locality import DEFAULT_CROSS_CITY_MBPS
from service.quote.model.interruptions import DEFAULT_GPU_HOURS_BETWEEN_FAILURES
from service.quote.model.scaling import DEFAULT_CROSS_NODE_FACTOR
from service.quote.model.snapshot import Snapshot
from service.quote.prose.texts import hours_text, join_text, text

__all__ = [
    "DEFAULT_CROSS_CITY_MBPS",
    "DEFAULT_CROSS_NODE_FACTOR",
    "DEFAULT_GPU_HOURS_BETWEEN_FAILURES",
    "FastPaths",
    "QuoteOptions",
    "Snapshot",
    "build_quote",
    "format_cny",
    "hours_text",
    "join_text",
    "prepare_snapshot",
    "text",
]

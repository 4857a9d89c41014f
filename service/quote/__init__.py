"""The quote engine: pure functions from a price snapshot and a request to ranked, costed quotes.

The front door is ``build_quote(snapshot, request, options=QuoteOptions(...)) -> QuoteResponse``; the
``Snapshot`` it consumes is built once per store version (``Snapshot.build``). Everything else in this
package is a private helper module. No I/O, no clock, no environment.
"""

from service.quote.base.money import format_cny
from service.quote.base.paths import FastPaths
from service.quote.engine import QuoteOptions, build_quote
from service.quote.evaluate.locality import DEFAULT_CROSS_CITY_MBPS
from service.quote.model.scaling import DEFAULT_CROSS_NODE_FACTOR
from service.quote.model.snapshot import Snapshot
from service.quote.prose.texts import hours_text, join_text, text

__all__ = [
    "DEFAULT_CROSS_CITY_MBPS",
    "DEFAULT_CROSS_NODE_FACTOR",
    "FastPaths",
    "QuoteOptions",
    "Snapshot",
    "build_quote",
    "format_cny",
    "hours_text",
    "join_text",
    "text",
]

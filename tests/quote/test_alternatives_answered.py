"""A quantized alternative is the recommendation of the same request at that precision, answered in full.

The engine asks each quantized precision for its top quote alone (``engine._recommendation``, the
request's limit set to 1, no other quote or summary built): a quote is built from its own figures, and
the recommendation is the top of the ranking whatever the limit. Here every alternative of a seeded draw
is compared with the recommended quote, and the memory, of the quantized request's own full answer.
"""

from __future__ import annotations

import msgspec

from schemas.quote import QuoteRequest
from service.errors import InvalidRequest
from service.quote import FastPaths, QuoteOptions, build_quote
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import catalog, requests

_OPTIONS = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))


def _at(request: QuoteRequest, precision: str) -> QuoteRequest:
    return msgspec.structs.replace(
        request, workload=msgspec.structs.replace(request.workload, precision=precision)
    )


def test_each_alternative_is_the_quantized_requests_own_recommendation() -> None:
    snapshot = catalog(61, 700, clusters=24, packaged_vendors=4)
    compared = 0
    for request in requests(61, 1500, snapshot):
        try:
            response = build_quote(snapshot, request, options=_OPTIONS)
        except InvalidRequest:
            continue
        for alternative in response.alternatives:
            own = build_quote(snapshot, _at(request, alternative.precision), options=_OPTIONS)
            recommended = next(quote for quote in own.quotes if quote.id == own.recommended)
            assert msgspec.json.encode(alternative.quote) == msgspec.json.encode(recommended)
            assert own.memory is not None and alternative.memory_needed_gb == own.memory.needed_gb
            compared += 1
    assert compared >= 40

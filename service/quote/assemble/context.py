"""What building one response's quotes shares: the request, the evaluation, and sentences worked out once.

A response returns about a dozen quotes that repeat many of the same words: the stale-price warning of
every offer fetched at the same time, the scaling notes of every quote at the same card count on the
same kind of machine, the model's memory. Each is written for the first quote that needs it and kept
here, for this response only (the fields in them are the request's, so no other response may reuse them).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import msgspec

from adapters.gpus import GpuCatalog
from schemas.quote import Lang
from schemas.vendor import QuarantinedPrice
from service.ages import age_text
from service.quote.base.memo import Memos, MemoSlot, memoized
from service.quote.evaluate.evaluation import Evaluation
from service.quote.model.tables import OfferTables
from service.quote.prose.texts import Message, number_text, said, text
from service.quote.resolve import ResolvedRequest

__all__ = ["QuoteContext"]


class QuoteContext(msgspec.Struct, frozen=True):
    tables: OfferTables
    evaluation: Evaluation
    resolved: ResolvedRequest
    catalog: GpuCatalog
    now_s: float
    price_max_age_s: float
    operator_factor: float  # the configured cross-node factor, named by the notes
    cross_city_mbps: float
    lang: Lang
    # The vendors' held-back prices by offer id (``model.snapshot.Snapshot.held``).
    held: Mapping[str, QuarantinedPrice] = msgspec.field(default_factory=dict)
    # Sentences written for the first quote that needs them (``base.memo.MemoSlot``), this response only.
    memos: Memos = msgspec.field(default_factory=Memos)

    def word(self, key: str) -> str:
        """Message ``key`` with no fields, in the response's language."""
        return _word(key, self.lang)

    def stale_warning(self, fetched_at: datetime) -> Message:
        """The stale-price warning of an offer fetched at ``fetched_at``."""
        memo = _STALE.of(self.memos)
        return memo.lookup(fetched_at) or memo.keep(fetched_at, self._stale_warning(fetched_at))

    def _stale_warning(self, fetched_at: datetime) -> Message:
        # The age in the words every surface uses (``GET /vendors``' ``oldest_price_age``): "700 days".
        age = age_text(self.now_s - fetched_at.timestamp(), self.lang)
        return _stale_warning(age, self.price_max_age_s, self.lang)


# The stale-price warning by the offer's fetch time.
_STALE: MemoSlot[datetime, Message] = MemoSlot("stale warnings", size=64)


@memoized(256)
def _word(key: str, lang: Lang) -> str:
    """Message ``key`` with no fields (``interconnect_nvlink``, ``communication_heavy``)."""
    return text(key, lang)


@memoized(1024)
def _stale_warning(age: str, price_max_age_s: float, lang: Lang) -> Message:
    """The stale-price warning for an age as shown ("5.5 h", "700 days"): the same for every response
    within it."""
    return said("warn_stale", lang, age=age, max_age=number_text(price_max_age_s / 3600))

"""What building one response's quotes shares: the request, the evaluation, and sentences worked out once.

A response returns about a dozen quotes that repeat many of the same words: the stale-price warning of
every offer fetched at the same time, the scaling notes of every quote at the same card count on the
same kind of machine, the model's memory. Each is written for the first quote that needs it and kept
here, for this response only (the fields in them are the request's, so no other response may reuse them).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime

from adapters.gpus import GpuCatalog
from schemas.quote import Lang
from service.quote.evaluate.evaluation import Evaluation
from service.quote.model.tables import OfferTables
from service.quote.prose.texts import number_text, text
from service.quote.resolve import ResolvedRequest

__all__ = ["QuoteContext"]


@dataclass(frozen=True, slots=True)
class QuoteContext:
    tables: OfferTables
    evaluation: Evaluation
    resolved: ResolvedRequest
    catalog: GpuCatalog
    now_s: float
    price_max_age_s: float
    operator_factor: float  # the configured cross-node factor, named by the notes
    cross_city_mbps: float
    lang: Lang
    # The conversion warning, by the offer's GPU.
    by_gpu: dict[str, str] = field(default_factory=dict)
    # The stale-price warning, by the offer's fetch time.
    by_fetched_at: dict[datetime, str] = field(default_factory=dict)
    # The scaling notes, by (speed-up column, count column, nodes).
    by_scaling: dict[tuple[int, int, int], tuple[str, ...]] = field(default_factory=dict)
    # Message ids looked up with no fields (``interconnect_nvlink``, ``communication_heavy``).
    words: dict[str, str] = field(default_factory=dict)

    def word(self, key: str) -> str:
        """Message ``key`` with no fields, in the response's language."""
        found = self.words.get(key)
        if found is None:
            found = self.words[key] = text(key, self.lang)
        return found

    def stale_warning(self, fetched_at: datetime) -> str:
        warning = self.by_fetched_at.get(fetched_at)
        if warning is None:
            age = number_text((self.now_s - fetched_at.timestamp()) / 3600)
            warning = self.by_fetched_at[fetched_at] = _stale_warning(age, self.price_max_age_s, self.lang)
        return warning


@functools.lru_cache(maxsize=1024)
def _stale_warning(age: str, price_max_age_s: float, lang: Lang) -> str:
    """The stale-price warning for an age as shown (to 0.01 h): the same for every response within it."""
    return text("warn_stale", lang, age=age, max_age=number_text(price_max_age_s / 3600))

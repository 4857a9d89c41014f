"""Literal offers and snapshots for the quote engine's tests."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from adapters.gpus import DEFAULT_GPU_CATALOG
from schemas.offer import Offer
from schemas.quote import QuoteRequest, Workload
from schemas.vendor import VendorStatus
from service.quote import QuoteOptions, Snapshot
from service.quote.evaluate import evaluation
from tests.builders import make_offer

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
FRESH = NOW - timedelta(hours=1)
MAX_AGE_S = 86_400.0
GPU_MEMORY_GB = {
    gpu: DEFAULT_GPU_CATALOG.get(gpu).memory_gb
    for gpu in ("rtx4090", "h800", "h100", "a100-80g", "a100-40g", "l20", "h20")
}


# ``tests.builders.make_offer``, fetched an hour before the engine's ``NOW``.
offer = functools.partial(make_offer, fetched_at=FRESH)


def snapshot(offers: Sequence[Offer], *, version: int = 1) -> Snapshot:
    offers = tuple(offers)
    vendors = sorted({item.vendor for item in offers})
    return Snapshot.of(
        offers,
        {vendor: VendorStatus(vendor=vendor, last_success_at=FRESH) for vendor in vendors},
        version=version,
        built_at=NOW,
    )


def request(gpu_hours: float = 48.0, **fields: object) -> QuoteRequest:
    workload_fields = {
        name: fields.pop(name) for name in ("reference_gpu", "model_params_b", "task") if name in fields
    }
    return QuoteRequest(workload=Workload(gpu_hours=gpu_hours, **workload_fields), **fields)  # type: ignore[arg-type]


def options(**fields: object) -> QuoteOptions:
    return QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, **fields)  # type: ignore[arg-type]


def count_billed_cells(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on (within the test), how many cells each evaluation billed, in order."""
    billed: list[int] = []
    original = evaluation._evaluation

    def counting(*args: Any, **kwargs: Any) -> evaluation.Evaluation:
        result = original(*args, **kwargs)
        billed.append(result.cells.size)
        return result

    monkeypatch.setattr(evaluation, "_evaluation", counting)
    return billed

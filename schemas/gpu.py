"""The GPU catalog's entry: a canonical model id with the facts the quote engine needs."""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = ["GpuModel"]


class GpuModel(msgspec.Struct, kw_only=True, frozen=True):
    """``perf_index`` is dense BF16/FP16 tensor throughput relative to an RTX 4090 (= 1.0)."""

    id: str
    name: str
    memory_gb: Annotated[int, msgspec.Meta(ge=1)]
    perf_index: Annotated[float, msgspec.Meta(gt=0)]
    tflops_bf16: float
    aliases: list[str] = []

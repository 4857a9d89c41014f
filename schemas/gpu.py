"""The GPU catalog's entry: a canonical model id with the facts the quote engine needs."""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = ["GpuModel", "PairSpeed", "SpeedRange"]

SpeedRatio = Annotated[float, msgspec.Meta(gt=0)]


class SpeedRange(msgspec.Struct, kw_only=True, frozen=True):
    """Speed relative to an RTX 4090 (= 1): ``low`` ≤ ``expected`` ≤ ``high``.

    Each end stands for one kind of work on every card: ``low`` the pessimistic case (work bound by
    whichever of compute or memory bandwidth the card has relatively less of, or a lower measured
    figure), ``expected`` the typical measured or roofline figure, ``high`` the optimistic case (work bound
    by what the card has relatively more of: peak tensor compute, or memory bandwidth where that ratio is
    larger).
    """

    low: SpeedRatio
    expected: SpeedRatio
    high: SpeedRatio

    def __post_init__(self) -> None:
        if not self.low <= self.expected <= self.high:
            raise ValueError(f"speed range out of order: {self.low} / {self.expected} / {self.high}")


class GpuModel(msgspec.Struct, kw_only=True, frozen=True):
    """A GPU model. Speeds are relative to an RTX 4090 (= 1.0).

    ``perf_index`` is the peak ratio: dense BF16/FP16 tensor TFLOPS (FP32 accumulate) over the RTX 4090's
    165. It is kept for compatibility; it is the compute-bound end of ``speed``, which is its ``high``
    end unless the card's memory-bandwidth ratio is larger. ``speed`` is the honest range to convert
    hours with; ``speed_sources`` says where each of its ends comes from. A model built without a
    ``speed`` is converted at its ``perf_index`` at every end.
    """

    id: str
    name: str
    memory_gb: Annotated[int, msgspec.Meta(ge=1)]
    perf_index: Annotated[float, msgspec.Meta(gt=0)]
    tflops_bf16: float
    aliases: list[str] = []
    # Memory bandwidth in TB/s (vendor datasheet): what decoding a served model is bound by.
    bandwidth_tb_s: float | None = None
    speed: SpeedRange | None = None
    speed_sources: list[str] = []


class PairSpeed(msgspec.Struct, kw_only=True, frozen=True):
    """A measured speed of one model over another (``faster`` over ``slower``): where a publication
    compares the two directly, converting hours between them uses it rather than each one's range over
    the RTX 4090 (which compounds two ranges: H800 to A100 through the 4090 is 1.49–6×, measured 2–3×)."""

    faster: str
    slower: str
    speed: SpeedRange
    source: str

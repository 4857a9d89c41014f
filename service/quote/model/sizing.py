"""Sizing a job from its model and data, for callers who do not know its hours on one card.

Transformer training costs about 6 × N × D floating-point operations (N parameters, the active ones of a
mixture-of-experts model; D training tokens): 2 N D forward, 4 N D backward (Kaplan et al. 2020; EleutherAI,
"Transformer Math 101"). LoRA and QLoRA skip the frozen weights' gradients: about 4 N D. Offline inference
costs about 2 N per token generated. Hours on one card of a GPU model = FLOPs ÷ (its peak dense BF16 FLOPS ×
MFU), MFU being the model FLOPs utilization, a range (docs/engine.md: GPT-3 21 %, Gopher 32.5 %, PaLM 46 %,
Llama 3 405B 38–43 %, a single-node fine-tune with FlashAttention 35–60 %): 0.2 / 0.35 / 0.5 by default, the
caller's measured ``workload.mfu`` at every end where given. "LoRA on Qwen2.5-72B over 50 M tokens" is
4 × 72.7e9 × 5e7 = 1.45e19 FLOPs: 11.67 h on one H800 (989 TFLOPS) at 0.35, 8.17–20.42 h over the range.

QLoRA dequantizes its 4-bit base on the fly and runs slower than LoRA at the same FLOPs; no figure for how
much is given here, so its hours share LoRA's range and the quote says it is an estimate.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
import numpy as np

from schemas.quote import Range, Task
from service.quote.base.arrays import FloatArray

__all__ = [
    "DEFAULT_MFU",
    "FLOPS_PER_PARAM_TOKEN",
    "REFERENCE_TFLOPS",
    "TokenSizing",
    "job_flops",
    "one_card_hours",
]

FLOPS_PER_PARAM_TOKEN: Mapping[Task, float] = {
    "pretrain": 6.0,
    "full_finetune": 6.0,
    "lora": 4.0,
    "qlora": 4.0,
    "inference": 2.0,
}
"""FLOPs per parameter per token by task (module docstring)."""

DEFAULT_MFU = Range(low=0.2, expected=0.35, high=0.5)
"""Model FLOPs utilization a job reaches: the low end about GPT-3's, the high end about PaLM's (sources in
docs/engine.md)."""

_SECONDS_PER_HOUR = 3600.0
REFERENCE_TFLOPS = 165.0
"""The RTX 4090's peak dense BF16 rate (FP32 accumulate): the card every relative speed is measured on."""


class TokenSizing(msgspec.Struct, frozen=True, gc=False):
    """A job given by its tokens: its FLOPs and the utilization they run at."""

    flops: float
    flops_per_param_token: float
    active_params_b: float
    tokens: float
    mfu: Range
    mfu_from_caller: bool

    @property
    def reference_hours(self) -> float:
        """Expected hours on one RTX 4090, the card relative speeds are measured on."""
        return self.flops / (REFERENCE_TFLOPS * 1e12 * self.mfu.expected) / _SECONDS_PER_HOUR


def job_flops(task: Task, active_params_b: float, tokens: float) -> float:
    """The job's floating-point operations: FLOPs per parameter-token × parameters × tokens."""
    return FLOPS_PER_PARAM_TOKEN[task] * active_params_b * 1e9 * tokens


def one_card_hours(flops: float, tflops_bf16: FloatArray, mfu: Range) -> FloatArray:
    """``(3, rows)``: fewest / expected / most hours on one card of each row's GPU (``tflops_bf16``, NaN for
    a GPU whose peak is unknown), the fewest at the highest utilization."""
    rates = np.stack((mfu.high * tflops_bf16, mfu.expected * tflops_bf16, mfu.low * tflops_bf16))
    hours: FloatArray = flops / (rates * 1e12) / _SECONDS_PER_HOUR
    return hours

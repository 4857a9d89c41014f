"""Memory fit: the fewest cards whose memory holds the job at ≤ 90 % use.

Bytes per parameter by task (sources in docs/engine.md; defaults an operator may override through
``QuoteOptions``):

- ``full_finetune`` / ``pretrain``: 16 (bf16 weights and gradients, fp32 master weights and AdamW
  moments). Activations depend on batch size and sequence length, which a request does not carry; the
  10 % headroom plus activation checkpointing is what covers them, so the figure is a floor: a 70B full
  fine-tune needs 1,120 GB, more than one 8 × 80 GB machine (576 GB usable) holds.
- ``lora``: 2 × 1.2 (frozen bf16 base, adapters, optimizer state for the adapters and activations).
- ``qlora``: 0.6 (4-bit base with its quantization constants and adapters; a 65B model fits one 48 GB
  card, as the QLoRA paper shows).
- ``inference``: 2 × 1.2 (bf16 weights plus KV cache and runtime overhead).

Weight precision (``workload.precision``: bf16 2, fp8 / int8 1, int4 0.5 bytes per weight) changes the
figures above, which assume bf16 weights (QLoRA: a 4-bit base), as follows:

- ``inference``: the whole figure scales by precision bytes / 2. The × 1.2 for KV cache and runtime
  overhead is a share of the weights (weights × 1.2), so a 14.8B model at int4 needs
  14.8 × 0.5 × 1.2 = 8.9 GB and one 24 GB card holds it; at bf16 it needs 35.5 GB, two such cards.
- ``lora``: the frozen base's 2 bytes become the precision's bytes; the rest of the figure (adapters,
  their optimizer state, activations: 0.4 by default) is trained in bf16/fp32 and does not change.
- ``qlora``: the figure already holds a 4-bit base (0.5 bytes); a precision swaps those 0.5 bytes for its
  own (int4 leaves the figure, bf16 makes the base bf16). Left out, the base stays 4-bit.
- ``full_finetune`` / ``pretrain``: unchanged. Mixed-precision training keeps bf16 weights and gradients
  and fp32 master weights and moments whatever precision the model ships in.

Left out, the precision is bf16 (QLoRA: its 4-bit base), the figures above unchanged.

Sharding the model over n cards divides the need by n (ZeRO-3 / FSDP, tensor or pipeline parallelism).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np
import numpy.typing as npt

from schemas.quote import Task

__all__ = [
    "DEFAULT_BYTES_PER_PARAM",
    "MAX_MEMORY_USE",
    "PRECISION_BYTES",
    "Precision",
    "bytes_per_param_at",
    "memory_needed_gb",
    "min_cards",
]

Precision = Literal["bf16", "fp8", "int8", "int4"]

PRECISION_BYTES: Mapping[Precision, float] = {"bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
"""Bytes per weight at each precision (docs/engine.md, memory)."""

_BF16_BYTES = 2.0
_QLORA_BASE_BYTES = 0.5

MAX_MEMORY_USE = 0.9
"""Keep peak use under 90 % of a card's memory (Jiangsu article: past 90 % the card is at its limit)."""

DEFAULT_BYTES_PER_PARAM: Mapping[Task, float] = {
    "full_finetune": 16.0,
    "pretrain": 16.0,
    "lora": 2.0 * 1.2,
    "qlora": 0.6,
    "inference": 2.0 * 1.2,
}


def bytes_per_param_at(
    task: Task, precision: Precision | None, bytes_per_param: Mapping[Task, float] = DEFAULT_BYTES_PER_PARAM
) -> float:
    """Bytes per parameter for ``task`` with weights at ``precision`` (the rule in the module docstring)."""
    figure = bytes_per_param[task]
    if precision is None:
        return figure
    weight_bytes = PRECISION_BYTES[precision]
    if task == "inference":
        return figure * weight_bytes / _BF16_BYTES
    if task == "lora":
        return max(0.0, figure - _BF16_BYTES) + weight_bytes
    if task == "qlora":
        return max(0.0, figure - _QLORA_BASE_BYTES) + weight_bytes
    return figure


def memory_needed_gb(
    model_params_b: float,
    task: Task,
    bytes_per_param: Mapping[Task, float] = DEFAULT_BYTES_PER_PARAM,
    *,
    precision: Precision | None = None,
) -> float:
    """GB the job needs in total: billions of parameters × bytes per parameter at ``precision``."""
    return model_params_b * bytes_per_param_at(task, precision, bytes_per_param)


def min_cards(
    memory_needed: float, card_memory_gb: npt.NDArray[np.float64], *, max_use: float = MAX_MEMORY_USE
) -> npt.NDArray[np.float64]:
    """Fewest cards of each ``card_memory_gb`` that hold ``memory_needed`` GB at ≤ ``max_use`` of each card."""
    # The small tolerance keeps an exact fit (72 GB on one 80 GB card) at one card despite float noise.
    return np.maximum(1.0, np.ceil(memory_needed / (card_memory_gb * max_use) - 1e-9))

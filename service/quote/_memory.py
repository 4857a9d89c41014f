"""Memory fit: the fewest cards whose memory holds the job at ≤ 90 % use.

Bytes per parameter by task (DOMAIN.md; defaults an operator may override through ``QuoteOptions``):

- ``full_finetune`` / ``pretrain``: 16 (bf16 weights and gradients, fp32 master weights and AdamW
  moments). Activations depend on batch size and sequence length, which a request does not carry; the
  10 % headroom plus activation checkpointing is what covers them, so the figure is a floor: a 70B full
  fine-tune needs 1,120 GB, more than one 8 × 80 GB machine (576 GB usable) holds.
- ``lora``: 2 × 1.2 (frozen bf16 base, adapters, optimizer state for the adapters and activations).
- ``qlora``: 0.6 (4-bit base with its quantization constants and adapters; a 65B model fits one 48 GB
  card, as the QLoRA paper shows).
- ``inference``: 2 × 1.2 (bf16 weights plus KV cache and runtime overhead).

Sharding the model over n cards divides the need by n (ZeRO-3 / FSDP, tensor or pipeline parallelism).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from schemas.quote import Task

__all__ = ["DEFAULT_BYTES_PER_PARAM", "MAX_MEMORY_USE", "memory_needed_gb", "min_cards"]

MAX_MEMORY_USE = 0.9
"""Keep peak use under 90 % of a card's memory (Jiangsu article: past 90 % the card is at its limit)."""

DEFAULT_BYTES_PER_PARAM: Mapping[Task, float] = {
    "full_finetune": 16.0,
    "pretrain": 16.0,
    "lora": 2.0 * 1.2,
    "qlora": 0.6,
    "inference": 2.0 * 1.2,
}


def memory_needed_gb(
    model_params_b: float, task: Task, bytes_per_param: Mapping[Task, float] = DEFAULT_BYTES_PER_PARAM
) -> float:
    """GB the job needs in total: billions of parameters × bytes per parameter."""
    return model_params_b * bytes_per_param[task]


def min_cards(
    memory_needed: float, card_memory_gb: npt.NDArray[np.float64], *, max_use: float = MAX_MEMORY_USE
) -> npt.NDArray[np.float64]:
    """Fewest cards of each ``card_memory_gb`` that hold ``memory_needed`` GB at ≤ ``max_use`` of each card."""
    # The small tolerance keeps an exact fit (72 GB on one 80 GB card) at one card despite float noise.
    return np.maximum(1.0, np.ceil(memory_needed / (card_memory_gb * max_use) - 1e-9))

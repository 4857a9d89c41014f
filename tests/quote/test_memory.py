"""Memory fit: bytes per parameter by task, 90 % of card memory, the minimum card count."""

from __future__ import annotations

import numpy as np
import pytest

from service.quote.model import memory_needed_gb, min_cards


@pytest.mark.parametrize(
    ("params_b", "task", "card_memory_gb", "cards"),
    [
        (7, "inference", 24, 1),  # 16.8 GB ≤ 21.6 GB
        (13, "inference", 24, 2),  # 31.2 GB
        (7, "full_finetune", 80, 2),  # 112 GB over 72 GB usable per card
        (70, "full_finetune", 80, 16),  # 1,120 GB: more than one 8 × 80 GB machine
        (65, "qlora", 48, 1),  # the QLoRA paper's headline: 65B on one 48 GB card
        (70, "lora", 80, 3),  # 168 GB
    ],
)
def test_min_cards(params_b: float, task: str, card_memory_gb: int, cards: int) -> None:
    needed = memory_needed_gb(params_b, task)  # type: ignore[arg-type]
    assert min_cards(needed, np.array([float(card_memory_gb)])).tolist() == [cards]


def test_an_exact_fit_needs_no_extra_card() -> None:
    assert min_cards(72.0, np.array([80.0])).tolist() == [1]


def test_each_card_size_gets_its_own_minimum() -> None:
    # A 70B full fine-tune (1,120 GB) on 24, 40, 80 and 96 GB cards.
    assert min_cards(1120.0, np.array([24.0, 40.0, 80.0, 96.0])).tolist() == [52, 32, 16, 13]

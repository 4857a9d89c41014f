"""The summary compares the fastest option only with a single card that meets the limits and is billed
for one card (or one machine rented as a unit); otherwise it leaves the comparison out."""

from __future__ import annotations

from tests.summary.reference import quote_reference

JOB_48H = {"gpu_hours": 48, "reference_gpu": "rtx4090"}


def test_a_single_card_past_the_deadline_is_not_compared() -> None:
    # One RTX 4090 takes 48 h (48 gpu-hours / 1 card), past the 14 h deadline: no single-card sentence.
    # The recommendation: 5 × RTX 4090 in Wuxi at 13.53 h; the fastest 128 × H800 in Shenzhen, 0.28 h.
    response = quote_reference({"workload": JOB_48H, "deadline_hours": 14})
    assert "single card" not in response.summary.lower()
    assert "14.55 h" not in response.summary and "about 48 h" not in response.summary
    assert "The fastest option is 128 × H800 from Shenzhen reference cluster" in response.summary
    zh = quote_reference({"workload": JOB_48H, "deadline_hours": 14, "lang": "zh"}).summary
    assert "单卡" not in zh
    assert "最快方案：深圳参考集群（深圳）的 128 张 H800" in zh


def test_a_cluster_billing_many_cards_is_no_single_card() -> None:
    # Shenzhen's RTX 4090 cluster bills whole nodes, at least 16 cards: one card there is billed for
    # 16, so it is no single-card option and the comparison is left out (no "¥… less" against it).
    body = {"workload": JOB_48H, "deadline_hours": 400, "vendors": ["sz-cluster-ref"], "gpus": ["rtx4090"]}
    summary = quote_reference(body).summary
    assert "single card" not in summary.lower()
    assert "Against one card" not in summary
    assert "The fastest option is 64 × RTX 4090 from Shenzhen reference cluster" in summary


def test_a_qualifying_single_card_is_still_compared() -> None:
    # With a 400 h deadline one RTX 4090 in Wuxi (day package: 2 days × ¥108 = ¥216.00, 48 h) qualifies
    # and is the recommendation; the fastest, 128 × H800 at 0.28 h for ¥5,280.00, saves 48 − 0.28 =
    # 47.72 h for ¥5,280.00 − ¥216.00 = ¥5,064.00 more.
    summary = quote_reference({"workload": JOB_48H, "deadline_hours": 400}).summary
    assert "That is the single-card option" in summary
    assert "finishes 47.72 h sooner for ¥5,064.00 more" in summary

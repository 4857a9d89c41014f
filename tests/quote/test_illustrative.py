"""Illustrative reference prices never pass for live ones: they are as old as the articles they come from
(stale, still quotable), and every answer that uses one says so first, in the summary and in the CLI."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from adapters.base import AdapterContext, VendorFetchError
from adapters.static import parse_static
from schemas.quote import Lang
from schemas.vendor import ILLUSTRATIVE_LABEL, VendorConfig
from service.cli.quote import format_table
from tests.examples import JIANGSU_EXAMPLE
from tests.summary.reference import quote_reference

ILLUSTRATIVE_WORD = {"en": "illustrative", "zh": "示意"}


def first_sentence(summary: str, lang: Lang) -> str:
    return summary.split("。" if lang == "zh" else ". ", maxsplit=1)[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_worked_example_still_answers_from_stale_reference_prices(lang: Lang) -> None:
    response = quote_reference({**JIANGSU_EXAMPLE, "lang": lang})
    by_cards = {quote.cards: quote for quote in response.quotes}
    assert by_cards[1].cost_cny.expected == 384.00  # 48 h × ¥8
    assert by_cards[4].cost_cny.expected == 512.00  # 16 h × 4 × ¥8
    for quote in response.quotes:
        assert quote.label == ILLUSTRATIVE_LABEL
        assert quote.stale  # observed 2025-01-01, past the 24 h max age
        assert quote.price_fetched_at == datetime(2024, 12, 31, 16, 0, tzinfo=UTC)
    assert response.snapshot.oldest_fetched_at == datetime(2024, 12, 31, 16, 0, tzinfo=UTC)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "body",
    [
        JIANGSU_EXAMPLE,
        {"workload": {"gpu_hours": 100, "reference_gpu": "rtx4090"}},
        {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090", "model_params_b": 72.7, "task": "lora"}},
    ],
)
def test_reference_quotes_say_illustrative_in_the_first_sentence(body: dict[str, object], lang: Lang) -> None:
    summary = quote_reference({**body, "lang": lang}).summary
    assert ILLUSTRATIVE_WORD[lang] in first_sentence(summary, lang), summary


def test_the_chinese_jiangsu_summary_has_no_english_words() -> None:
    summary = quote_reference({**JIANGSU_EXAMPLE, "lang": "zh"}).summary
    # GPU names and ¥ amounts are the only Latin letters and ASCII figures a Chinese reader should meet.
    left = re.sub(r"RTX 4090|¥[\d,]+\.\d\d", "", summary)
    assert re.findall(r"[A-Za-z_]+", left) == [], summary
    assert "苏州参考云（江苏苏州）的 1 张 RTX 4090" in summary


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_cli_table_marks_each_illustrative_row_and_explains_the_mark(lang: Lang) -> None:
    lines = format_table(quote_reference({**JIANGSU_EXAMPLE, "lang": lang}), lang).splitlines()
    assert "js-suzhou-ref:4090*" in lines[1] and "js-suzhou-ref:4090*" in lines[2]
    note = {"en": "* illustrative reference price", "zh": "* 示意参考价"}[lang]
    assert lines[3].startswith(note)


def _fetched_at(document: bytes) -> datetime:
    config = VendorConfig(
        id="js-file", name="File", region="jiangsu", city="suzhou", format="static", path="x"
    )
    clock = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    result = parse_static(document, config, AdapterContext(clock=lambda: clock), source="file:x")
    return result.offers[0].fetched_at


ROW = b'"offers": [{"sku": "4090", "gpu": "RTX 4090", "pricing": {"kind": "card_hour", "price_cny": 8.0}}]'


@pytest.mark.parametrize(
    ("observed_at", "fetched_at"),
    [
        (b"", datetime(2026, 11, 30, 12, 0, tzinfo=UTC)),  # no observed_at: as new as the read
        (b'"observed_at": "2026-03-02T09:00:00+08:00", ', datetime(2026, 3, 2, 1, 0, tzinfo=UTC)),
        # A time in the future is taken as the read's time: a feed cannot keep its prices fresh.
        (b'"observed_at": "2030-01-01T00:00:00Z", ', datetime(2026, 11, 30, 12, 0, tzinfo=UTC)),
    ],
)
def test_a_static_feed_states_when_its_prices_were_observed(observed_at: bytes, fetched_at: datetime) -> None:
    assert _fetched_at(b"{" + observed_at + ROW + b"}") == fetched_at


def test_an_observed_at_without_a_utc_offset_fails_the_feed() -> None:
    with pytest.raises(VendorFetchError, match="observed_at"):
        _fetched_at(b'{"observed_at": "2026-03-02T09:00:00", ' + ROW + b"}")

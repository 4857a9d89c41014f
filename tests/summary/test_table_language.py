"""``gpuquote quote --lang zh`` prints the table's headers, marks and footer in Chinese, lined up."""

from __future__ import annotations

import unicodedata

import pytest

from schemas.offer import CardHourPricing
from schemas.quote import Lang, QuoteResponse
from service.cli.quote import format_table
from service.quote import build_quote
from tests.quote.factories import offer, options, request, snapshot


def article(lang: Lang) -> QuoteResponse:
    """The Jiangsu article's example (one RTX 4090 at ¥8/card-hour, 48 h, on 1 or 4 cards) in ``lang``."""
    catalog = snapshot([offer("js-suzhou", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0))])
    return build_quote(catalog, request(48, card_counts=[1, 4], lang=lang), options=options())


def columns(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(character) in "WF" else 1 for character in line)


def has_chinese(line: str) -> bool:
    return any("\u4e00" <= character <= "\u9fff" for character in line)


def test_chinese_table_has_chinese_headers_marks_and_footer() -> None:
    lines = format_table(article("zh"), "zh").splitlines()
    assert lines[0].split() == ["#", "GPU", "卡数", "报价", "计费", "小时", "费用", "¥/卡时", "备注"]
    assert "最便宜" in lines[1] and "¥384.00" in lines[1]
    assert "最快" in lines[2] and "¥512.00 (¥480.00–¥576.00)" in lines[2]
    assert lines[4].startswith("推荐：")
    assert lines[-1].startswith("排除的候选：")


def test_chinese_table_columns_line_up_on_a_terminal() -> None:
    header, cheapest, fastest = format_table(article("zh"), "zh").splitlines()[:3]
    # The notes column starts at the same terminal column in the header and in both rows, though the
    # Chinese headers before it are two columns wide per character.
    notes_at = columns(header[: header.index("备注")])
    assert columns(cheapest[: cheapest.index("最便宜")]) == notes_at, cheapest
    assert columns(fastest[: fastest.index("最快")]) == notes_at, fastest


@pytest.mark.parametrize("response_lang", ["en", "zh"])
def test_english_table_has_no_chinese_outside_the_summary(response_lang: Lang) -> None:
    lines = format_table(article(response_lang)).splitlines()
    summary_line = 4
    assert lines[0].split()[:4] == ["#", "gpu", "cards", "offer"]
    assert not any(has_chinese(line) for number, line in enumerate(lines) if number != summary_line)
    assert lines[-1].startswith("excluded candidates: ")

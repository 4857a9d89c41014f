"""What ``POST /quote``'s summary says for the Jiangsu article's example, in English and Chinese.

A chatbot repeats this paragraph as it is, so its facts are pinned: the cheapest option (one card, 48 h,
¥384.00), the fastest (four cards, 16 h, ¥512.00), and what the faster one costs against the time it
saves (32 h sooner for ¥128.00 more).
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from tests.examples import JIANGSU_EXAMPLE

Client = AsyncTestClient[Any]

# Per language: the cheapest option's facts, the fastest option's facts, the trade-off's figures.
EXPECTED = {
    "en": (["1 × ", "48 h", "¥384.00"], ["fastest", "4 × ", "16 h", "¥512.00"], ["32 h", "¥128.00"]),
    "zh": (["1 张", "48 小时", "¥384.00"], ["最快", "4 张", "16 小时", "¥512.00"], ["32 小时", "¥128.00"]),
}


async def summary(client: Client, lang: str) -> dict[str, Any]:
    response = await client.post("/quote", json={**JIANGSU_EXAMPLE, "lang": lang})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["cheapest"] == "js-suzhou-ref:4090@1"
    assert body["fastest"] == "js-suzhou-ref:4090@4"
    return body


def sentence_with(text: str, needle: str, lang: str) -> str:
    """The sentence of ``text`` holding ``needle`` (sentences end at ". " or "。")."""
    separator = "。" if lang == "zh" else ". "
    return next(part for part in text.split(separator) if needle in part)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_it_names_the_cheapest_and_the_fastest_option(client: Client, lang: str) -> None:
    text = (await summary(client, lang))["summary"]
    cheapest, fastest, _ = EXPECTED[lang]
    # Each option's card count, time and cost are told together, in one sentence.
    cheapest_sentence = sentence_with(text, "¥384.00", lang)
    assert all(fact in cheapest_sentence for fact in cheapest), (cheapest, cheapest_sentence)
    fastest_part = text[text.index(fastest[0]) :]
    assert all(fact in fastest_part for fact in fastest[1:]), (fastest, fastest_part)
    # The four-card time is a range: the speed-up is 2.8-3.2x, not exactly 3x.
    assert "15–17.14" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_it_reads_as_one_paragraph_in_its_language(client: Client, lang: str) -> None:
    text = (await summary(client, lang))["summary"]
    assert "\n" not in text
    assert "{" not in text and "None" not in text
    assert text.endswith("。" if lang == "zh" else ".")
    chinese_characters = sum("\u4e00" <= character <= "\u9fff" for character in text)
    assert (chinese_characters > 20) == (lang == "zh")
    assert text.startswith("推荐：" if lang == "zh" else "Recommended: ")


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_it_states_the_trade_off_between_them(client: Client, lang: str) -> None:
    text = (await summary(client, lang))["summary"]
    _, _, (time_saved, extra_cost) = EXPECTED[lang]
    # Both figures in one sentence, which compares the fastest option against one card.
    trade_off = sentence_with(text, time_saved, lang)
    assert extra_cost in trade_off, trade_off
    assert (
        ("fastest" in trade_off and "one card" in trade_off)
        if lang == "en"
        else ("最快" in trade_off and "单卡" in trade_off)
    )

"""Hours converted between GPU models: the catalog's sourced speed range, or the caller's measured ratio."""

from __future__ import annotations

import msgspec
import pytest

from schemas.offer import CardHourPricing
from schemas.quote import Quote, QuoteRequest, Workload
from service.errors import InvalidRequest
from service.quote import build_quote
from tests.quote.factories import offer, options, snapshot

H800 = offer("sz-x", "h800", gpu="h800", pricing=CardHourPricing(cny_per_card_hour=40.0))
RTX4090 = offer("js-suzhou", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0, granularity_s=3600))


def _request(
    *, speed_ratios: dict[str, float] | None = None, lang: str = "en", **fields: object
) -> QuoteRequest:
    workload = Workload(gpu_hours=48.0, reference_gpu="rtx4090", speed_ratios=speed_ratios)
    return QuoteRequest(workload=workload, lang=lang, **fields)  # type: ignore[arg-type]


def _h800_quote(*, speed_ratios: dict[str, float] | None = None, lang: str = "en", **fields: object) -> Quote:
    request = _request(speed_ratios=speed_ratios, lang=lang, card_counts=[1], gpus=["h800"], **fields)
    response = build_quote(snapshot([H800]), request, options=options())
    (quote,) = response.quotes
    return quote


def _converted(quote: Quote) -> str:
    (warning,) = [warning for warning in quote.warnings if "converted from" in warning or "换算" in warning]
    return warning


def test_catalog_range_widens_hours_and_cost() -> None:
    quote = _h800_quote()
    # 48 h over the H800's 6.0 / 3.3 / 3.0 speed against an RTX 4090.
    assert quote.hours.low <= 8.0 and quote.hours.high >= 13.7
    assert (quote.hours.low, quote.hours.expected, quote.hours.high) == (8.0, 14.55, 16.0)
    # Each bound billed on its own hours.
    assert quote.cost_cny.low < quote.cost_cny.expected < quote.cost_cny.high
    warning = _converted(quote)
    assert "the H800 3.0× (measured throughput) to 6.0× (peak compute)" in warning
    assert "48 h on one card becomes 14.55 h (8–16 h)" in warning


def test_measured_ratio_replaces_the_catalog_range() -> None:
    quote = _h800_quote(speed_ratios={"H800 SXM": 3.2})
    assert (quote.hours.low, quote.hours.expected, quote.hours.high) == (15.0, 15.0, 15.0)
    assert quote.cost_cny.low == quote.cost_cny.expected == quote.cost_cny.high
    warning = _converted(quote)
    assert "your measured ratio 3.2×" in warning
    assert "peak compute" not in warning


def test_deadline_judges_expected_hours_and_warns_on_the_high_end() -> None:
    quote = _h800_quote(deadline_hours=15)
    assert quote.hours.expected == 14.55
    assert any("deadline at risk" in warning and "16 h" in warning for warning in quote.warnings)


def test_chinese_warning_has_the_same_figures() -> None:
    warning = _converted(_h800_quote(lang="zh"))
    assert "3.0–6.0 倍" in warning and "实测吞吐" in warning and "峰值算力" in warning
    measured = _converted(_h800_quote(lang="zh", speed_ratios={"h800": 3.2}))
    assert "3.2 倍" in measured


def test_same_gpu_quotes_are_unchanged() -> None:
    response = build_quote(
        snapshot([RTX4090, H800]),
        _request(card_counts=[1, 4], gpus=["rtx4090"], speed_ratios={"h800": 3.2}),
        options=options(),
    )
    by_cards = {quote.cards: quote for quote in response.quotes}
    one, four = by_cards[1], by_cards[4]
    assert (one.hours.low, one.hours.expected, one.hours.high, one.cost_cny.expected) == (
        48.0,
        48.0,
        48.0,
        384.0,
    )
    assert (four.hours.low, four.hours.expected, four.hours.high) == (15.0, 16.0, 17.14)
    assert four.cost_cny.expected == 512.0
    assert not any("converted" in warning for quote in response.quotes for warning in quote.warnings)


@pytest.mark.parametrize(
    ("workload", "mentions"),
    [
        ({"reference_gpu": "rtx4090", "speed_ratios": {"b200": 2.0}}, "unknown GPU 'b200'"),
        ({"reference_gpu": "rtx4090", "speed_ratios": {"a100": 1.5}}, "ambiguous GPU 'a100'"),
        ({"reference_gpu": "rtx4090", "speed_ratios": {"h800": 3.2, "H800 SXM": 3.0}}, "two different"),
        ({"speed_ratios": {"h800": 3.2}}, "workload.reference_gpu"),
    ],
)
def test_bad_speed_ratios_name_the_field(workload: dict[str, object], mentions: str) -> None:
    request = QuoteRequest(workload=Workload(gpu_hours=48.0, **workload))  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest) as raised:
        build_quote(snapshot([H800]), request, options=options())
    assert raised.value.field == "workload.speed_ratios"
    assert mentions in raised.value.reason


@pytest.mark.parametrize(
    "ratios",
    [{"h800": 0.0}, {"h800": 100.5}, {f"gpu{index}": 1.0 for index in range(33)}],
)
def test_speed_ratios_bounds_fail_at_decode(ratios: dict[str, float]) -> None:
    body = {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090", "speed_ratios": ratios}}
    with pytest.raises(msgspec.ValidationError, match=r"workload\.speed_ratios"):
        msgspec.convert(body, QuoteRequest)


def test_hours_from_an_a100_use_the_measured_pair_not_two_ranges_through_the_4090() -> None:
    # The catalog measures the H800 at 2.0 / 2.5 / 3.0 × the A100 80G directly: 48 h on the A100 is
    # 16 / 19.2 / 24 h on the H800 (through the RTX 4090 it would have been 8–32.32 h).
    workload = Workload(gpu_hours=48.0, reference_gpu="a100-80g")
    request = QuoteRequest(workload=workload, card_counts=[1], gpus=["h800"], deadline_hours=20)
    (quote,) = build_quote(snapshot([H800]), request, options=options()).quotes
    assert (quote.hours.low, quote.hours.expected, quote.hours.high) == (16.0, 19.2, 24.0)
    # 20 h holds at the expected speed, not at the pessimistic end.
    assert any("deadline at risk" in warning and "24 h" in warning for warning in quote.warnings)
    warning = _converted(quote)
    assert "2.0–3.0×, the H800 measured at 2.0–3.0× the A100 80G" in warning


def test_a_pair_the_catalog_does_not_measure_converts_through_the_4090() -> None:
    # A100 40G 1.0 / 1.3 / 1.9, H800 3.0 / 3.3 / 6.0 (both against an RTX 4090): 3.0 / 1.9 = 1.58 at the
    # pessimistic end (48 h → 30.4 h), 3.3 / 1.3 = 2.54 expected (18.91 h), 6.0 / 1.0 optimistic (8 h).
    workload = Workload(gpu_hours=48.0, reference_gpu="a100-40g")
    request = QuoteRequest(workload=workload, card_counts=[1], gpus=["h800"])
    (quote,) = build_quote(snapshot([H800]), request, options=options()).quotes
    assert (quote.hours.low, quote.hours.expected, quote.hours.high) == (8.0, 18.91, 30.4)
    warning = _converted(quote)
    assert "the H800 3.0× (measured throughput) to 6.0× (peak compute)" in warning
    assert "the A100 40G 1.0× (measured throughput) to 1.9× (peak compute)" in warning

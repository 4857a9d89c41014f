"""``gpuquote quote``: arguments to a request, the table, and a run over the embedded reference store."""

from __future__ import annotations

import argparse
import json
import os

import msgspec
import pytest

from schemas.offer import CardHourPricing
from service.cli.quote import add_quote_parser, build_request, format_table
from service.quote import build_quote
from tests.quote.factories import offer, options, request, snapshot


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gpuquote")
    add_quote_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["quote", *argv])


def test_arguments_become_the_same_request_as_the_api() -> None:
    args = _parse(
        "--gpu-hours", "48", "--gpu", "rtx4090", "--cards", "1,4", "--rank-by", "time", "--lang", "zh"
    )
    built = build_request(args)
    assert built.workload.gpu_hours == 48.0
    assert built.workload.reference_gpu == "rtx4090"  # the one --gpu is also the reference
    assert (built.gpus, built.card_counts, built.rank_by, built.lang) == (["rtx4090"], [1, 4], "time", "zh")


def test_several_gpus_filter_without_a_reference() -> None:
    built = build_request(
        _parse("--gpu-hours", "10", "--gpu", "rtx4090,h800", "--scaling", '{"4": [3.5, 3.8]}')
    )
    assert built.gpus == ["rtx4090", "h800"]
    assert built.workload.reference_gpu is None
    assert built.scaling == {"4": (3.5, 3.8)}


def test_table_lists_ranked_quotes_and_the_summary() -> None:
    catalog = snapshot([offer("js-suzhou", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0))])
    table = format_table(build_quote(catalog, request(48, card_counts=[1, 4]), options=options()))
    lines = table.splitlines()
    assert lines[0].split()[:4] == ["#", "gpu", "cards", "offer"]
    assert "¥384.00" in lines[1] and "cheapest" in lines[1]
    assert "16 (15–17.14)" in lines[2] and "¥512.00 (¥480.00–¥576.00)" in lines[2] and "fastest" in lines[2]
    assert lines[4].startswith("Recommended:")


@pytest.fixture
def embedded_store(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("GPUQUOTE_"):
            monkeypatch.delenv(name)


@pytest.mark.usefixtures("embedded_store")
def test_quote_command_prints_the_article_example(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parse("--gpu-hours", "48", "--gpu", "rtx4090", "--cards", "1,4", "--vendor", "js-suzhou-ref",
                  "--pricing", "card_hour")  # fmt: skip
    assert args.handler(args) == 0
    output = capsys.readouterr().out
    assert "js-suzhou-ref:4090" in output
    assert "¥384.00" in output and "¥512.00" in output


@pytest.mark.usefixtures("embedded_store")
def test_quote_command_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parse("--gpu-hours", "48", "--gpu", "rtx4090", "--cards", "4", "--vendor", "js-suzhou-ref",
                  "--pricing", "card_hour", "--json")  # fmt: skip
    assert args.handler(args) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["quotes"][0]["cost_cny"]["expected"] == 512.0


def test_bad_argument_exits_2_naming_the_field(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parse("--gpu-hours", "-1")
    assert args.handler(args) == 2
    assert capsys.readouterr().err.strip() == "gpuquote quote: --gpu-hours: must be a number ≥ 0.001"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("--cards", "4,x"), "--cards: 'x' is not a whole number of cards; give counts like 1,4,8"),
        (("--cards", "0"), "--cards: must be a whole number ≥ 1"),
        (("--budget-cny", "-5"), "--budget-cny: must be a number ≥ 0.01"),
        (("--limit", "0"), "--limit: must be a whole number ≥ 1"),
        (("--scaling", "{bad"), "--scaling: is not valid JSON"),
        (("--pricing", "hourly"), "--pricing: "),
    ],
)
def test_bad_flags_are_named_in_a_sentence(
    argv: tuple[str, ...], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _parse("--gpu-hours", "48", *argv)
    assert args.handler(args) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"gpuquote quote: {expected}")
    assert "Traceback" not in error and "$." not in error and "budget_cny" not in error


@pytest.mark.usefixtures("embedded_store")
def test_engine_errors_name_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parse("--gpu-hours", "48", "--region", "beijing")
    assert args.handler(args) == 2
    error = capsys.readouterr().err
    assert error.startswith("gpuquote quote: --region: ")
    assert "jiangsu" in error  # the valid names are listed


def test_new_inputs_reach_the_request() -> None:
    built = build_request(
        _parse(
            "--gpu-hours", "48", "--gpu", "rtx4090,h800", "--reference-gpu", "rtx4090",
            "--speed-ratio", "h800=3.2", "--city", "苏州", "--model", "qwen2.5-14b", "--precision", "int4",
            "--task", "inference", "--communication", "heavy", "--data-city", "nanjing", "--dataset-gb", "500",
        )
    )  # fmt: skip
    workload = built.workload
    assert workload.speed_ratios == {"h800": 3.2}
    assert (workload.model, workload.precision, workload.communication) == ("qwen2.5-14b", "int4", "heavy")
    assert (workload.data_city, workload.dataset_gb, built.cities) == ("nanjing", 500.0, ["苏州"])


def test_serving_hours_make_a_serving_request() -> None:
    built = build_request(_parse("--serving-hours", "720", "--replicas", "2", "--params-b", "70.6"))
    workload = built.workload
    assert (workload.kind, workload.hours, workload.replicas, workload.task) == (
        "serving",
        720.0,
        2,
        "inference",
    )
    assert workload.gpu_hours is None and workload.reference_gpu is None


@pytest.mark.usefixtures("embedded_store")
def test_a_job_without_hours_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parse("--gpu", "rtx4090")
    assert args.handler(args) == 2
    assert capsys.readouterr().err.startswith("gpuquote quote: --gpu-hours: ")


def test_a_bad_speed_ratio_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parse("--gpu-hours", "48", "--speed-ratio", "h800")
    assert args.handler(args) == 2
    assert capsys.readouterr().err.startswith("gpuquote quote: --speed-ratio: 'h800' is not GPU=RATIO")


def test_table_names_gpus_and_pricing_as_people_write_them() -> None:
    catalog = snapshot([offer("js-suzhou", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0))])
    english = format_table(build_quote(catalog, request(48, card_counts=[1]), options=options())).splitlines()
    assert english[1].split()[:6] == ["1", "RTX", "4090", "1", "js-suzhou:4090", "card_hour"]
    chinese = format_table(
        build_quote(catalog, request(48, card_counts=[1], lang="zh"), options=options()), "zh"
    ).splitlines()
    assert chinese[1].split()[:6] == ["1", "RTX", "4090", "1", "js-suzhou:4090", "按卡时计费"]
    assert "rtx4090" not in chinese[1] and "card_hour" not in chinese[1]


@pytest.mark.usefixtures("embedded_store")
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("--serving-hours", "720", "--gpu-hours", "48"), "takes --serving-hours, not --gpu-hours"),
        (("--replicas", "2", "--gpu-hours", "48"), "replicas are for a serving workload (--serving-hours)"),
    ],
)
def test_cross_field_errors_speak_of_flags(
    argv: tuple[str, ...], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _parse(*argv)
    assert args.handler(args) == 2
    error = capsys.readouterr().err
    assert expected in error and "workload." not in error


def test_an_empty_card_count_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parse("--gpu-hours", "48", "--cards", "4,,8")
    assert args.handler(args) == 2
    assert capsys.readouterr().err.strip() == (
        "gpuquote quote: --cards: '4,,8' has an empty item; give counts like 1,4,8"
    )


def test_risk_flags_become_the_request_fields() -> None:
    flags = "--deadline-hours 20 --deadline-confidence high --budget-confidence high --no-allow-spot"
    sizes = "--checkpoint-interval-h 2 --checkpoint-minutes 5 --restart-minutes 30"
    built = build_request(_parse("--gpu-hours", "48", *flags.split(), *sizes.split()))
    assert (built.deadline_confidence, built.budget_confidence, built.allow_spot) == ("high", "high", False)
    workload = built.workload
    figures = (workload.checkpoint_interval_h, workload.checkpoint_minutes, workload.restart_minutes)
    assert figures == (2, 5, 30)
    assert build_request(_parse("--gpu-hours", "48", "--allow-spot")).allow_spot is True
    # Left out, the job kind decides (batch: yes, serving: no).
    assert build_request(_parse("--gpu-hours", "48")).allow_spot is None


def test_a_spot_row_is_marked_in_the_table() -> None:
    spot = msgspec.structs.replace(
        offer("v", "4090-spot", pricing=CardHourPricing(cny_per_card_hour=4.0)), spot=True
    )
    catalog = snapshot([spot])
    table = format_table(build_quote(catalog, request(48, card_counts=[1]), options=options()), "zh")
    assert "抢占式" in table.splitlines()[1]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("--deadline-confidence", "sure"), "--deadline-confidence: must be one of expected, high"),
        (("--restart-minutes", "-5"), "--restart-minutes: must be a number ≥ 0"),
        (
            ("--serving-hours", "48", "--checkpoint-interval-h", "2"),
            "--checkpoint-interval-h: a serving job keeps",
        ),
    ],
)
def test_bad_risk_flags_exit_2_naming_the_flag(
    argv: tuple[str, ...], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _parse(*(argv if "--serving-hours" in argv else ("--gpu-hours", "48", *argv)))
    assert args.handler(args) == 2
    assert said in capsys.readouterr().err


def test_the_plan_without_the_risk_is_marked_in_the_table() -> None:
    catalog = snapshot([offer("v", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0))])
    response = build_quote(catalog, request(48, card_counts=[3, 4], deadline_hours=20), options=options())
    rows = {line.split()[3]: line for line in format_table(response).splitlines()[1:3]}
    assert "recommended" in rows["3"] and "no risk" in rows["4"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_quote_warning_is_printed_in_full_once_and_marked_on_its_rows(lang: str) -> None:
    """A row says which warnings are its own by number; under the table each warning is written out
    once, exactly as the quote gives it, whatever the number of rows sharing it."""
    spot = msgspec.structs.replace(
        offer("v", "4090-spot", pricing=CardHourPricing(cny_per_card_hour=4.0)), spot=True
    )
    steady = offer("w", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0))
    response = build_quote(
        snapshot([spot, steady]), request(48, card_counts=[1, 4], lang=lang), options=options()
    )
    warned = [quote for quote in response.quotes if quote.warnings]
    assert warned, "the spot offer's quotes carry warnings"
    table = format_table(response, lang)  # type: ignore[arg-type]
    lines = table.splitlines()
    distinct = list(dict.fromkeys(warning for quote in response.quotes for warning in quote.warnings))
    for number, warning in enumerate(distinct, start=1):
        assert lines.count(f"[{number}] {warning}") == 1
    for row, quote in zip(lines[1:], response.quotes, strict=False):
        for warning in quote.warnings:
            assert f"[{distinct.index(warning) + 1}]" in row
    assert "warning(s)" not in table

"""Ages in words: minutes, then hours to a tenth, then whole days; never "16,801.86 h"."""

from __future__ import annotations

import pytest

from service.ages import age_text


@pytest.mark.parametrize(
    ("seconds", "english", "chinese"),
    [
        (-5, "under a minute", "不到 1 分钟"),
        (59.9, "under a minute", "不到 1 分钟"),
        (60, "1 min", "1 分钟"),
        (3599, "59 min", "59 分钟"),
        (3600, "1 h", "1 小时"),
        (5.52 * 3600, "5.5 h", "5.5 小时"),
        (86_400, "24 h", "24 小时"),
        (47.96 * 3600, "48 h", "48 小时"),
        (48 * 3600, "2 days", "2 天"),
        (1_209_599, "13 days", "13 天"),
        (60_486_696, "700 days", "700 天"),
        (1_000 * 86_400 + 1, "1,000 days", "1,000 天"),
    ],
)
def test_an_age_reads_in_the_unit_a_person_would_use(seconds: float, english: str, chinese: str) -> None:
    assert age_text(seconds) == english
    assert age_text(seconds, "zh") == chinese

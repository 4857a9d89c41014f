"""The heap is trimmed when it holds much memory unused, and looked at only after quotes or builds ran; a
running service allocates its arrays without numpy's huge-page advice."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from schemas.quote import QuoteRequest, Workload
from service.heap import HeapTrimmer, Trimmed, huge_page_switch, no_huge_page_advice
from service.services import AppServices, build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore

glibc_only = pytest.mark.skipif(not HeapTrimmer(min_free_bytes=0).available, reason="glibc's heap only")


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _heap_blocks(count: int, size: int) -> list[bytearray]:
    """``count`` blocks of ``size`` bytes, each written (so its pages are resident)."""
    blocks = [bytearray(size) for _ in range(count)]
    for block in blocks:
        block[::4096] = b"\x01" * len(block[::4096])
    return blocks


@glibc_only
def test_a_heap_holding_much_unused_memory_gives_it_back_and_one_holding_little_does_not() -> None:
    # Blocks under glibc's first mmap threshold (128 KiB) come from the heap; freeing all but the last
    # leaves 96 MB unused below it, which only a trim gives back (the last pins the heap's top).
    blocks = _heap_blocks(1_000, 96_000)
    kept = blocks[-1]
    del blocks
    unused = HeapTrimmer(min_free_bytes=0).free_bytes()
    assert unused > 80_000_000
    left = HeapTrimmer(min_free_bytes=2 * unused).trim()
    assert not left.trimmed and abs(left.free_bytes - unused) < 1_000_000
    before = _rss_bytes()
    trimmed = HeapTrimmer(min_free_bytes=unused // 2).trim()
    assert trimmed.trimmed and trimmed.free_bytes >= unused // 2
    assert before - _rss_bytes() > 60_000_000
    assert len(kept) == 96_000  # held to the end: it pins the top


@pytest.mark.skipif(sys.platform == "linux", reason="elsewhere than Linux")
def test_elsewhere_the_trimmer_does_nothing() -> None:
    assert HeapTrimmer(min_free_bytes=0).trim() == Trimmed(0, trimmed=False)


class _CountingTrimmer(HeapTrimmer):
    def __init__(self) -> None:
        super().__init__(min_free_bytes=0)
        self.looks = 0

    def trim(self) -> Trimmed:
        self.looks += 1
        return Trimmed(0, trimmed=False)


async def _looks_after(services: AppServices, quotes: int, wait_s: float) -> int:
    trimmer = _CountingTrimmer()
    services.heap = trimmer
    async with services.running():
        await asyncio.sleep(wait_s)  # the start-up snapshot is looked at once
        first = trimmer.looks
        await asyncio.sleep(wait_s)
        assert trimmer.looks == first  # nothing ran since
        request = QuoteRequest(workload=Workload(gpu_hours=48))
        for _ in range(quotes):
            await services.quote(request)
        await asyncio.sleep(wait_s)
        return trimmer.looks - first


@glibc_only
async def test_the_service_looks_at_the_heap_after_quotes_ran_and_not_while_idle() -> None:
    settings = Settings(heap_trim_interval_s=0.05)
    assert await _looks_after(build_services(settings, store=MemoryPriceStore()), 3, 0.3) >= 1


async def test_no_trimming_when_switched_off() -> None:
    settings = Settings(heap_trim_interval_s=0)
    assert await _looks_after(build_services(settings, store=MemoryPriceStore()), 3, 0.2) == 0


@pytest.fixture
def huge_page_advice() -> Iterator[Callable[[bool], bool]]:
    """numpy's switch (it returns the setting it replaces), left as the test found it."""
    switch = huge_page_switch()
    if switch is None:
        pytest.skip("this numpy has no huge-page switch")
    found = switch(True)
    yield switch
    switch(found)


def test_the_advice_is_turned_off_and_was_on(
    huge_page_advice: Callable[[bool], bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    assert no_huge_page_advice() is True
    assert huge_page_advice(False) is False
    assert no_huge_page_advice() is False


def test_numpys_own_setting_in_the_environment_decides(
    huge_page_advice: Callable[[bool], bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    assert no_huge_page_advice() is False
    assert huge_page_advice(True) is True  # left on


async def test_a_running_service_allocates_without_huge_page_advice(
    huge_page_advice: Callable[[bool], bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    services = build_services(Settings(heap_trim_interval_s=0), store=MemoryPriceStore())
    async with services.running():
        assert huge_page_advice(False) is False

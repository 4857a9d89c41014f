"""The background thread that decodes and builds snapshots: its priority, and the collector paused only
while it works."""

from __future__ import annotations

import gc
import os
import sys
import threading
from pathlib import Path

import polars
import pytest

from service.background import SWITCH_INTERVAL_S, BackgroundThread


def _own_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own priority is Linux's")
async def test_work_runs_at_the_lowest_priority_and_the_loop_keeps_its_own() -> None:
    loop_nice = _own_nice()
    thread = BackgroundThread("gpuquote-test-background")
    try:
        assert await thread.run(_own_nice) == 19
        assert await thread.run(threading.current_thread) is not threading.current_thread()
    finally:
        thread.close()
    assert _own_nice() == loop_nice  # the thread alone was reniced, not the process


async def test_a_nice_of_0_leaves_the_thread_at_the_process_priority() -> None:
    thread = BackgroundThread("gpuquote-test-background", nice=0)
    try:
        assert await thread.run(_own_nice) == _own_nice()
    finally:
        thread.close()


def test_a_process_with_background_work_switches_threads_within_a_tenth_of_a_millisecond() -> None:
    """A request arriving while the thread holds the GIL waits one switch interval for it, not 5 ms."""
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)  # the interpreter's default
        BackgroundThread("gpuquote-test-background").close()
        assert (
            sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S, rel=0.02)
            and SWITCH_INTERVAL_S <= 0.0001
        )
        sys.setswitchinterval(0.00005)  # a process that asked for shorter keeps it
        BackgroundThread("gpuquote-test-background").close()
        assert sys.getswitchinterval() == pytest.approx(0.00005, abs=2e-6)  # kept in whole microseconds
    finally:
        sys.setswitchinterval(before)


async def test_the_collector_is_paused_while_work_runs_and_back_after_even_when_it_raises() -> None:
    thread = BackgroundThread("gpuquote-test-background")

    def fails() -> None:
        raise RuntimeError("out of memory")

    try:
        assert gc.isenabled()
        assert await thread.run(gc.isenabled) is False
        assert gc.isenabled()
        with pytest.raises(RuntimeError, match="out of memory"):
            await thread.run(fails)
        assert gc.isenabled()
    finally:
        thread.close()


def _threads_at_nice(nice: int) -> set[int]:
    found = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        if int(fields[16]) == nice:  # the 19th field of /proc/.../stat: nice
            found.add(int(task.name))
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own priority is Linux's")
async def test_a_library_pool_first_used_by_the_work_keeps_the_process_priority() -> None:
    thread = BackgroundThread("gpuquote-test-background")

    def polars_work() -> int:
        frame = polars.DataFrame({"cards": list(range(10_000))})
        return int(frame.select(polars.col("cards").sum()).item())

    try:
        assert await thread.run(polars_work) == 49_995_000
        background_id = await thread.run(threading.get_native_id)
    finally:
        thread.close()
    assert _threads_at_nice(19) - {background_id} <= _other_background_threads()


def _other_background_threads() -> set[int]:
    """Threads at nice 19 this test did not start: other tests' background threads still winding down."""
    return {
        thread.native_id
        for thread in threading.enumerate()
        if thread.name.startswith("gpuquote-") and thread.native_id is not None
    }

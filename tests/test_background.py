"""The background thread that decodes and builds snapshots: its priority, and the collector paused only
while it works."""

from __future__ import annotations

import gc
import os
import sys
import threading

import pytest

from service.background import BackgroundThread


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

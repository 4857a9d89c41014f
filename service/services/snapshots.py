"""The in-process snapshot cache: the engine's input rebuilt only when the store's version moved.

Each request needs the store's version, bounded by ``deadline_s``: concurrent requests share one
``GET version`` in flight (so a burst costs Redis one round trip and the pool one connection, not one
each), and the wait does not count the event loop's own delays (``service.store.deadline``). The catalog
is decoded and the tables are prepared once per version, in a thread, one rebuild at a time
(``_rebuilds``): while it runs every request is answered from the held snapshot at once, and the new one
is swapped in whole when it is built (only the first build, with nothing held, is waited for). Each
answer states the snapshot it came from (its version, its prices' fetch times), so an older one served
meanwhile tells its own facts. Whatever the store does, a held snapshot keeps serving and the cache
remembers why (the store's state for ``/ready`` and the quotes' warnings):

- unreachable or slower than the deadline: the shared breaker opens, and until it closes only one
  request per probe interval asks the store again;
- a version or a payload that does not decode, or data that is missing (``StoreCorrupt``, a fault in the
  contents): the version that failed is remembered and not read again until it moves; a vendor that
  does not decode or is missing keeps its offers from the held snapshot while the others are rebuilt;
- contents that decode but cannot be served (a snapshot that fails to build, or to answer a quote and
  the vendor list): the vendors at fault keep their held offers, or the whole held snapshot keeps
  serving; the version is reported as faulty like one that does not decode;
- empty (a restart without data): the held snapshot keeps serving until a refresh refills it;
- a rebuild that fails by an exception: the held snapshot keeps serving, and the rebuild is tried again
  once ``retry_after_s`` has passed.

Only configured vendors are served: a vendor that left the vendors file is gone from every answer, even
before a refresh takes it out of the store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime

from service.background import BACKGROUND_NICE, BackgroundThread
from service.errors import StoreUnreachable
from service.quote import Snapshot
from service.services._contents import (
    build_served,
    held_contents,
    keep_only,
    missing_after_failure,
    patched,
    with_kept,
)
from service.services._rebuilds import Rebuilds
from service.store.base import PriceStore, StoreContents, StoreCorrupt, StoreUnavailable
from service.store.breaker import StoreBreaker
from service.store.deadline import StoreSlow, wait_for_store

__all__ = ["SnapshotCache"]

logger = logging.getLogger("gpuquote.snapshots")

# A check for a snapshot that must answer quotes: raises whatever a request would hit.
SnapshotCheck = Callable[[Snapshot], None]
# Builds the served snapshot of store contents (``_contents.build_served``); runs in a thread.
SnapshotBuild = Callable[
    [StoreContents, datetime, SnapshotCheck | None, StoreContents | None],
    tuple[Snapshot | None, dict[str, str]],
]


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class _Check:
    """One ``GET version`` in flight, shared by every request that arrives while it runs."""

    task: asyncio.Task[int | None]
    started_at: float
    judged: bool = field(default=False)  # a request already reported it slow


class SnapshotCache:
    """Hands out the current snapshot, checking the store's version once per call."""

    def __init__(
        self,
        store: PriceStore,
        *,
        deadline_s: float = 0.5,
        breaker: StoreBreaker | None = None,
        clock: Callable[[], datetime] = _utc_now,
        on_rebuild: Callable[[Snapshot], None] | None = None,
        on_store_error: Callable[[str], None] | None = None,
        vendors: Collection[str] | None = None,
        check: SnapshotCheck | None = None,
        on_kept: Callable[[StoreContents], None] | None = None,
        build: SnapshotBuild = build_served,
        retry_after_s: float = 5.0,
        build_nice: int = BACKGROUND_NICE,
    ) -> None:
        self._store = store
        self._deadline_s = deadline_s
        self._hard_limit_s = max(2.0, 4 * deadline_s)
        self.breaker = breaker or StoreBreaker()
        self._clock = clock
        self._on_rebuild = on_rebuild
        self._on_store_error = on_store_error
        # The configured vendors (None: whatever the store holds), and what a new snapshot must pass.
        self._vendors = frozenset(vendors) if vendors is not None else None
        self._check_snapshot = check
        self._build_served = build
        # Told about vendors kept from the held snapshot that the store lacks (to write them back).
        self._on_kept = on_kept
        self._snapshot: Snapshot | None = None
        self._check: _Check | None = None
        self._rebuilds = Rebuilds(self._rebuild_at, retry_after_s=retry_after_s)
        self._build_thread = BackgroundThread("gpuquote-snapshot-build", nice=build_nice)
        # The version whose contents did not decode, and what was wrong (kept until the version moves).
        self._fault_version: int | None = None
        self.store_fault: str | None = None
        self.store_reachable = True
        self.store_empty = False
        self.last_store_error: str | None = None

    @property
    def held(self) -> Snapshot | None:
        """The snapshot in memory, without asking the store."""
        return self._snapshot

    @property
    def rebuild_error(self) -> str | None:
        """Why the last rebuild failed (the held snapshot serves until a retry works), or None."""
        return self._rebuilds.last_error

    def held_contents(self) -> StoreContents | None:
        """The held snapshot as store contents (to seed a store that came back empty)."""
        return held_contents(self._snapshot) if self._snapshot is not None else None

    async def current(self) -> Snapshot:
        """The snapshot to answer with now: the held one while a newer one is built."""
        held = self._snapshot
        if held is not None and not self.breaker.allow():
            self.store_reachable = False
            return held
        check = self._check
        if check is None or check.task.done():
            loop = asyncio.get_running_loop()
            check = self._check = _Check(asyncio.create_task(self._read_version()), loop.time())
            check.task.add_done_callback(_retrieve)
        try:
            version = await wait_for_store(
                check.task,
                self._deadline_s,
                started_at=check.started_at,
                hard_limit_s=self._hard_limit_s,
            )
        except StoreSlow:
            if not check.judged:
                check.judged = True
                self._record_failure("version", StoreUnavailable(f"store slower than {self._deadline_s} s"))
            return self._held_or_raise()
        if version is None:  # the check failed; it recorded why
            return self._held_or_raise()
        return await self._at_version(version, held)

    async def latest(self, *, timeout_s: float | None = None) -> Snapshot:
        """``current``, then the rebuild it started (or found running), waited for at most ``timeout_s``
        (None: until it ends): what the store holds now, for a caller that should not answer from an
        older snapshot (``/ready`` reporting what a rebuild found, a process that has just refreshed)."""
        snapshot = await self.current()
        if (running := self._rebuilds.running) is not None:
            await asyncio.wait({running}, timeout=timeout_s)  # not cancelled on a timeout: it goes on
        return self._snapshot or snapshot

    async def catch_up(self) -> None:
        """After this process wrote the store: a held snapshot is rebuilt at the store's version before
        this returns, so the process answers from what it wrote. A process holding none (the refresh
        command) builds nothing."""
        if self._snapshot is not None:
            with suppress(StoreUnreachable):
                await self.latest()

    async def _read_version(self) -> int | None:
        """The store's version, or None after recording why it could not be read."""
        try:
            async with asyncio.timeout(self._hard_limit_s):
                version = await self._store.version()
        except StoreCorrupt as error:
            self._corrupt(error)
            return None
        except (StoreUnavailable, TimeoutError) as error:
            reason = error if isinstance(error, StoreUnavailable) else StoreUnavailable("store timed out")
            self._record_failure("version", reason)
            return None
        self._store_answered()
        return version

    async def _at_version(self, version: int, held: Snapshot | None) -> Snapshot:
        if held is not None and version == 0:
            # The store lost its data (a restart without persistence): keep serving the prices held
            # here until a refresh fills the store again.
            self.store_empty = True
            self.store_fault = None
            return held
        self.store_empty = False
        if held is not None and version in {held.version, self._fault_version}:
            if version != self._fault_version:
                self.store_fault = None
            return held
        rebuild = self._rebuilds.start(version)
        if held is None:
            if rebuild is None:  # the last build failed and is not retried yet
                raise StoreUnreachable(self._rebuilds.last_error or "price snapshot not built yet")
            return await asyncio.shield(rebuild)
        # The new snapshot is built meanwhile (or retried later), and served once it is there.
        return held

    async def _rebuild_at(self, version: int) -> Snapshot:
        try:
            contents = await self._store.read(expected_vendors=self._vendors or ())
        except StoreUnavailable as error:
            self._record_failure("read", error)
            return self._held_or_raise()
        held = self._snapshot
        if held is not None and contents.version == held.version and not contents.faults:
            return held  # asked for again while the last one was built, and nothing moved since
        contents = keep_only(contents, self._vendors)
        if contents.faults:
            if contents.version == 0 and held is not None:
                self._report_faults(version, contents.faults)
                return held  # the version itself went bad between the two reads
            contents = patched(contents, self.held_contents())
        contents = self._kept_failed_vendors(contents)
        # Building the tables (and checking them) is CPU work: a thread at the lowest priority keeps the
        # loop answering (``service.background``).
        snapshot, unusable = await self._build_thread.run(self._build, contents)
        faults = {**contents.faults, **unusable}
        if faults:
            self._report_faults(version, faults)
        else:
            self._fault_version, self.store_fault = None, None
        if snapshot is None:
            return self._held_or_raise()
        self._snapshot = snapshot  # one assignment on the loop: every request sees the old or the new
        self.store_empty = contents.empty
        # The old snapshot is freed (38 ms at 96,000 offers, when no request still holds it) and the new
        # one reported (a pass over its offers) on the build thread, not between two requests.
        retired, held = [held], None
        await self._build_thread.run(_retire, retired, snapshot, self._on_rebuild)
        return snapshot

    def _build(self, contents: StoreContents) -> tuple[Snapshot | None, dict[str, str]]:
        return self._build_served(contents, self._clock(), self._check_snapshot, self.held_contents())

    def _kept_failed_vendors(self, contents: StoreContents) -> StoreContents:
        """A vendor missing from the store after a failed refresh keeps the offers held here
        (``_contents.missing_after_failure``), and is reported (``on_kept``) so they can be written back:
        every replica then serves the same catalog."""
        held = self._snapshot
        kept = missing_after_failure(contents, held) if held is not None else {}
        if not kept:
            return contents
        logger.warning(
            "store holds no offers for %s after a failed refresh; keeping the held offers",
            ", ".join(sorted(kept)),
        )
        if self._on_kept is not None:
            self._on_kept(StoreContents(contents.version, kept, contents.statuses))
        return with_kept(contents, kept)

    def _report_faults(self, version: int, faults: Mapping[str, str]) -> None:
        keys = ", ".join(sorted(faults))
        self._fault_version = version
        self.store_fault = f"undecodable or missing values in the price store ({keys}); serving held prices"
        logger.warning("price store version %d: %s", version, self.store_fault)
        if self._on_store_error is not None:
            self._on_store_error("decode")

    def _corrupt(self, error: StoreCorrupt) -> None:
        # The store answers, so the breaker stays closed; the bad version is at most a few bytes read.
        self._store_answered()
        if self.store_fault != str(error):
            logger.warning("price store fault, serving the held snapshot: %s", error)
        self.store_fault = str(error)
        if self._on_store_error is not None:
            self._on_store_error("decode")

    def _store_answered(self) -> None:
        if self.breaker.succeeded():
            logger.info("price store reachable again")
        self.store_reachable = True
        self.last_store_error = None

    def _record_failure(self, operation: str, error: StoreUnavailable) -> None:
        if self._on_store_error is not None:
            self._on_store_error(operation)
        if self.breaker.failed(str(error)):
            logger.warning("price store unreachable, serving the held snapshot: %s", error)
        self.store_reachable = False
        self.last_store_error = str(error)

    def _held_or_raise(self) -> Snapshot:
        if self._snapshot is not None:
            return self._snapshot
        reason = self.store_fault or self.last_store_error or "no answer"
        raise StoreUnreachable(f"price store unavailable and no snapshot held: {reason}")

    async def aclose(self) -> None:
        await self._rebuilds.aclose()
        self._build_thread.close()
        task = self._check.task if self._check else None
        if task is not None and not task.done():
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task


def _retire(
    retired: list[Snapshot | None], snapshot: Snapshot, on_rebuild: Callable[[Snapshot], None] | None
) -> None:
    """Drops the replaced snapshot (the caller's last reference, in ``retired``) and reports the new one."""
    retired.clear()
    if on_rebuild is not None:
        on_rebuild(snapshot)


def _retrieve(task: asyncio.Task[object]) -> None:
    """A task nobody waited for to the end still has its error looked at (and not logged as lost)."""
    if not task.cancelled():
        task.exception()

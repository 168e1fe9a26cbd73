"""ReplicaAppender: a slave's put path. Raw commit log bytes from the master are appended
byte-identical at the end of the slave's log, then dispatched as the master's put path did.

The stream arrives in frames that may end mid-record, so the appender keeps the incomplete tail
in memory and writes only whole units: a record, or the blank marker plus the rest of a segment.
The log therefore always ends on a record boundary, recovery after a slave crash has nothing to
cut, and the offset a slave reports never covers half a record.

Two steps, as RocketMQ's slave has them (``HAClient`` appends to the commit log and reports its
max physical offset; ``ReputMessageService`` builds the consume queues and index behind it):

* :meth:`write` checks each unit's structure as recovery does (magic, size within the segment,
  PHYSICALOFFSET equal to its position, field lengths adding up to TOTALSIZE, a non-empty topic)
  and appends the whole units to the commit log, one copy per run of units. A unit that fails
  raises :class:`ReplicaStreamError` and nothing of it is kept. The body CRC is checked only when
  ``check_crc`` is set: the bytes come over TCP from a master that computed the CRC when it
  stored them, RocketMQ's slave does not re-check it either, and recovery checks it after a
  crash (``check_crc_on_recover``). The structural checks stay, so garbage is still refused.
* :meth:`dispatch` derives the consume queue units and index keys of everything written but not
  yet dispatched (``dispatch_plan.py``, with the functions recovery's re-dispatch uses, and a
  compiled twin), under the commit log lock, then tells the arrival listeners
  (long polling).

The HA client writes a burst of frames, reports the new end to the master, and only then
dispatches, so a SYNC_MASTER's producers do not wait for the slave's consume queues. Between the
two steps readers see what was dispatched before (a consume queue never points past the log, so
nothing half-built is served). :meth:`append` is both steps at once; :meth:`reset` dispatches
what is left before it forgets the pending tail.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable

from brokers.engine.common.message_codec import BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE, RECORD_FIXED_SIZE_V4
from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.commitlog_dispatcher import CommitLogDispatcher
from brokers.engine.store.dispatch_plan import plan_dispatch
from brokers.engine.store.record_check import VALID, check_record
from brokers.engine.store.running_flags import RunningFlags

log = logging.getLogger("brokers.engine.store.ha")

_PREFIX = struct.Struct(">iI")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_SYSFLAG_POS = 36
_BORN_HOST_POS = 48
_BORNHOST_V6_FLAG = 0x1 << 4
Arrival = tuple[str, int, int, int]
Written = tuple[bytes, int, list[tuple[int, int]]]  # (whole units, their first offset, (position, size) of each record)


class ReplicaStreamError(Exception):
    """The master's bytes cannot be appended (wrong offset, not a record); reconnect."""


def _store_timestamp(buf: bytes | bytearray, pos: int) -> int:
    (sys_flag,) = _I32.unpack_from(buf, pos + _SYSFLAG_POS)
    store_ts: int = _I64.unpack_from(buf, pos + _BORN_HOST_POS + (20 if sys_flag & _BORNHOST_V6_FLAG else 8))[0]
    return store_ts


class ReplicaAppender:
    """Appends and dispatches replicated bytes; one per slave store, used from one thread."""

    def __init__(
        self,
        *,
        commitlog: CommitLog,
        dispatcher: CommitLogDispatcher,
        flags: RunningFlags,
        notify: Callable[[list[Arrival]], None],
        check_crc: bool,
        max_pending: int,
    ) -> None:
        self._commitlog = commitlog
        self._dispatcher = dispatcher
        self._flags = flags
        self._notify = notify
        self._check_crc = check_crc
        self._max_pending = max_pending
        self._pending = bytearray()  # bytes past the log's end that do not make a whole unit yet
        self._written: list[Written] = []  # appended to the log, not dispatched yet
        self.last_appended_timestamp = commitlog.last_store_timestamp

    @property
    def expected_offset(self) -> int:
        """Where the next frame must start: the log's end plus the pending tail."""
        return self._commitlog.max_offset + len(self._pending)

    @property
    def pending_bytes(self) -> int:
        return len(self._pending)

    @property
    def undispatched_records(self) -> int:
        """Records in the commit log whose consume queue unit and index keys are not written yet."""
        return sum(len(records) for _chunk, _base, records in self._written)

    def reset(self) -> None:
        """Dispatch what was written, forget the pending tail (a new connection restarts the
        stream at the log's end)."""
        try:
            self.dispatch()
        except ReplicaStreamError as exc:  # the store is marked unhealthy; recovery re-dispatches
            log.error("HA: %s", exc)
        finally:
            self._written = []
            self._pending = bytearray()

    def append(self, offset: int, data: bytes | bytearray) -> int:
        """:meth:`write` then :meth:`dispatch`; return the log's end."""
        end = self.write(offset, data)
        self.dispatch()
        return end

    def write(self, offset: int, data: bytes | bytearray, start: int = 0, stop: int | None = None) -> int:
        """Take a frame's body, ``data[start:stop]``, starting at ``offset``: append its whole units
        to the log (not dispatched yet, see :meth:`dispatch`); return the log's end after appending.

        With nothing pending (a master's frames end on a record unless its size limit cuts one),
        the whole units are copied once, straight out of ``data``; only an incomplete last unit
        waits in the pending tail for the next frame."""
        cl = self._commitlog
        if stop is None:
            stop = len(data)
        if offset != self.expected_offset and not (
            cl.max_offset == 0 and not cl.files and not self._pending and offset % cl.file_size == 0
        ):
            raise ReplicaStreamError(f"frame at offset {offset}, but this slave expects {self.expected_offset}")
        if not self._flags.replica_writeable:  # a full disk does not stop a slave (RocketMQ)
            raise ReplicaStreamError("the store is closed or unhealthy; not appending")
        pending = self._pending
        if not pending:  # whole units straight from data; only an incomplete last one is kept
            whole, records = self._whole_units(data, offset, start, stop)
            with memoryview(data) as view:
                if whole:
                    self._append_chunk(bytes(view[start : start + whole]), offset, records)
                pending += view[start + whole : stop]
        else:
            base = offset - len(pending)
            with memoryview(data) as view:
                pending += view[start:stop]
            whole, records = self._whole_units(pending, base, 0, len(pending))
            if whole:
                with memoryview(pending) as view:
                    chunk = bytes(view[:whole])
                del pending[:whole]
                self._append_chunk(chunk, base, records)
        if len(pending) > self._max_pending:
            self._pending = bytearray()
            raise ReplicaStreamError(f"{len(pending)} bytes without a whole record: not a commit log stream")
        return cl.max_offset

    def _whole_units(
        self, buf: bytes | bytearray, base: int, start: int, stop: int
    ) -> tuple[int, list[tuple[int, int]]]:
        """(bytes of whole units at the start of ``buf[start:stop]``, which begins at offset ``base``;
        (position, size) of each record among them, positions counted from ``start``)."""
        fs = self._commitlog.file_size
        records: list[tuple[int, int]] = []
        check_crc = self._check_crc
        origin = base - start  # the offset buf[0] would have
        i = start
        while stop - i >= 8:
            phys = origin + i
            seg_end = phys - phys % fs + fs
            size, magic = _PREFIX.unpack_from(buf, i)
            if magic == BLANK_MAGIC_CODE:
                if size != seg_end - phys:
                    raise ReplicaStreamError(
                        f"blank marker at {phys} claims {size} bytes, the segment has {seg_end - phys}"
                    )
                if stop - i < size:
                    break
            elif magic == MESSAGE_MAGIC_CODE:
                if size < RECORD_FIXED_SIZE_V4 or phys + size > seg_end:
                    raise ReplicaStreamError(f"record at {phys} claims {size} bytes, which do not fit its segment")
                if stop - i < size:
                    break
                kind, _size, reason = check_record(buf, i, origin, seg_end - origin, check_crc)
                if kind != VALID:
                    raise ReplicaStreamError(f"record at {phys} fails the checks: {reason}")
                records.append((i - start, size))
            else:
                raise ReplicaStreamError(f"no record starts at {phys} (magic 0x{magic:08X})")
            i += size
        return i - start, records

    def _append_chunk(self, chunk: bytes, base: int, records: list[tuple[int, int]]) -> None:
        """Append whole units, one copy per segment they touch (a blank marker ends a segment)."""
        cl = self._commitlog
        fs = cl.file_size
        view = memoryview(chunk)
        try:
            with cl.lock:
                at = 0
                r = 0
                while at < len(chunk):
                    phys = base + at
                    stop = min(len(chunk), phys - phys % fs + fs - base)
                    last = -1  # the run's last record gives the log its last store time
                    while r < len(records) and records[r][0] < stop:
                        last = records[r][0]
                        r += 1
                    ts = _store_timestamp(chunk, last) if last >= 0 else 0
                    cl.append_raw(phys, view[at:stop], ts)
                    if ts:
                        self.last_appended_timestamp = ts
                    at = stop
        finally:
            view.release()
        if records:
            self._written.append((chunk, base, records))

    def dispatch(self) -> None:
        """Write the consume queue units and index keys of everything appended so far
        (:func:`~brokers.engine.store.dispatch_plan.plan_dispatch` groups them as the master's
        put path dispatched them)."""
        if not self._written:
            return
        written, self._written = self._written, []
        dispatcher = self._dispatcher
        arrivals: list[Arrival] = []
        with self._commitlog.lock:
            for chunk, base, records in written:
                batches, chunk_arrivals = plan_dispatch(chunk, base, records)
                for batch in batches:
                    if batch[4] is not None:
                        topic, queue_id, first_offset, store_ts, units, items = batch
                        try:
                            dispatcher.dispatch_batch(topic, queue_id, first_offset, units, items, store_ts)
                        except Exception as exc:
                            self._fail(units[0][0], exc)
                    else:
                        topic, queue_id, first_offset, store_ts, _, (phys, size, hashes) = batch
                        try:
                            dispatcher.dispatch(topic, queue_id, first_offset, phys, size, None, hashes, store_ts)
                        except Exception as exc:
                            self._fail(phys, exc)
                arrivals += chunk_arrivals
        if arrivals:
            self._notify(arrivals)

    def _fail(self, phys: int, exc: Exception) -> None:
        self._flags.make_unhealthy(f"dispatch of a replicated record failed: {exc}")
        raise ReplicaStreamError(f"dispatch failed at {phys}: {exc}") from exc

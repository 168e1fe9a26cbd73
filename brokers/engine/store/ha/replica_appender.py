"""ReplicaAppender: a slave's put path. Raw commit log bytes from the master are appended
byte-identical at the end of the slave's log and dispatched as the master's put path did.

The stream arrives in frames that may end mid-record, so the appender keeps the incomplete tail
in memory and writes only whole units: a record, or the blank marker plus the rest of a segment.
The log therefore always ends on a record boundary, recovery after a slave crash has nothing to
cut, and the offset a slave reports never covers half a record. Each record is checked as
recovery checks it (magic, size within the segment, PHYSICALOFFSET equal to its position, field
lengths, body CRC) before it is written; a unit that fails raises :class:`ReplicaStreamError`
and nothing of it is kept. The consume queue unit and index keys are derived by the functions
recovery's re-dispatch uses (``dispatch.py``, ``recovery.parse_for_dispatch``), under the commit
log lock, then the arrival listeners (long polling) hear of the new messages.
"""
from __future__ import annotations

import struct
from collections.abc import Callable

from brokers.engine.common.message import (
    PROPERTY_KEYS,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
    string_to_properties,
)
from brokers.engine.common.message_codec import BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE, RECORD_FIXED_SIZE_V4
from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.commitlog_dispatcher import CommitLogDispatcher
from brokers.engine.store.dispatch import (
    consume_queue_tags_code,
    goes_to_consume_queue,
    goes_to_index,
    index_key_hashes,
)
from brokers.engine.store.recovery import VALID, check_record, parse_for_dispatch
from brokers.engine.store.running_flags import RunningFlags

_PREFIX = struct.Struct(">iI")
Arrival = tuple[str, int, int, int]


class ReplicaStreamError(Exception):
    """The master's bytes cannot be appended (wrong offset, not a record); reconnect."""


class ReplicaAppender:
    """Appends and dispatches replicated bytes; one per slave store, used from one thread."""

    def __init__(self, *, commitlog: CommitLog, dispatcher: CommitLogDispatcher, flags: RunningFlags,
                 notify: Callable[[list[Arrival]], None], check_crc: bool, max_pending: int) -> None:
        self._commitlog = commitlog
        self._dispatcher = dispatcher
        self._flags = flags
        self._notify = notify
        self._check_crc = check_crc
        self._max_pending = max_pending
        self._pending = bytearray()  # bytes past the log's end that do not make a whole unit yet
        self.last_appended_timestamp = commitlog.last_store_timestamp

    @property
    def expected_offset(self) -> int:
        """Where the next frame must start: the log's end plus the pending tail."""
        return self._commitlog.max_offset + len(self._pending)

    @property
    def pending_bytes(self) -> int:
        return len(self._pending)

    def reset(self) -> None:
        """Forget the pending tail (a new connection restarts the stream at the log's end)."""
        self._pending = bytearray()

    def append(self, offset: int, data: bytes) -> int:
        """Take a frame's body starting at ``offset``; return the log's end after appending."""
        cl = self._commitlog
        if offset != self.expected_offset and not (cl.max_offset == 0 and not cl.files and not self._pending
                                                   and offset % cl.file_size == 0):
            raise ReplicaStreamError(f"frame at offset {offset}, but this slave expects {self.expected_offset}")
        if not self._flags.writeable:
            raise ReplicaStreamError("the store is closed or unhealthy; not appending")
        base = offset - len(self._pending) if self._pending else offset
        pending = self._pending
        pending += data
        units = self._whole_units(pending, base)
        if units:
            self._write(pending, base, units)
            del pending[: units[-1][0] + units[-1][1]]
        if len(pending) > self._max_pending:
            self.reset()
            raise ReplicaStreamError(f"{len(pending)} bytes without a whole record: not a commit log stream")
        return cl.max_offset

    def _whole_units(self, buf: bytearray, base: int) -> list[tuple[int, int, bool]]:
        """(position in ``buf``, size, is a record) of the whole units at the start of ``buf``."""
        fs = self._commitlog.file_size
        units: list[tuple[int, int, bool]] = []
        i = 0
        n = len(buf)
        while n - i >= 8:
            phys = base + i
            seg_end = phys - phys % fs + fs
            size, magic = _PREFIX.unpack_from(buf, i)
            if magic == BLANK_MAGIC_CODE:
                if size != seg_end - phys:
                    raise ReplicaStreamError(f"blank marker at {phys} claims {size} bytes, the segment has {seg_end - phys}")
                if n - i < size:
                    break
                units.append((i, size, False))
            elif magic == MESSAGE_MAGIC_CODE:
                if size < RECORD_FIXED_SIZE_V4 or phys + size > seg_end:
                    raise ReplicaStreamError(f"record at {phys} claims {size} bytes, which do not fit its segment")
                if n - i < size:
                    break
                kind, _size, reason = check_record(buf, i, base, seg_end - base, self._check_crc)
                if kind != VALID:
                    raise ReplicaStreamError(f"record at {phys} fails the checks: {reason}")
                units.append((i, size, True))
            else:
                raise ReplicaStreamError(f"no record starts at {phys} (magic 0x{magic:08X})")
            i += size
        return units

    def _write(self, buf: bytearray, base: int, units: list[tuple[int, int, bool]]) -> None:
        cl = self._commitlog
        view = memoryview(buf)
        arrivals: list[Arrival] = []
        try:
            self._write_locked(cl, buf, view, base, units, arrivals)
        finally:
            view.release()
        if arrivals:
            self._notify(arrivals)

    def _write_locked(self, cl: CommitLog, buf: bytearray, view: memoryview, base: int,
                      units: list[tuple[int, int, bool]], arrivals: list[Arrival]) -> None:
        with cl.lock:
            for pos, size, is_record in units:
                phys = base + pos
                if not is_record:
                    cl.append_raw(phys, view[pos : pos + size], 0)
                    continue
                topic, queue_id, queue_offset, sys_flag, store_ts, props_text = parse_for_dispatch(buf, pos)
                cl.append_raw(phys, view[pos : pos + size], store_ts)
                props = string_to_properties(props_text)
                tags = consume_queue_tags_code(topic, props, store_ts) if goes_to_consume_queue(sys_flag) else None
                hashes = None
                if goes_to_index(sys_flag) and (PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX in props or PROPERTY_KEYS in props):
                    hashes = index_key_hashes(topic, props)
                try:
                    self._dispatcher.dispatch(topic, queue_id, queue_offset, phys, size, tags, hashes, store_ts)
                except Exception as exc:
                    self._flags.make_unhealthy(f"dispatch of a replicated record failed: {exc}")
                    raise ReplicaStreamError(f"dispatch failed at {phys}: {exc}") from exc
                if tags is not None:
                    arrivals.append((topic, queue_id, queue_offset + 1, tags))
                self.last_appended_timestamp = store_ts

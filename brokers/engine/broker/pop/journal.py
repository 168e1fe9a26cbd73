"""PopJournal: the append-only file ``<store_dir>/pop/journal`` that makes PopState durable.

One record per line, a CRC-32 of the JSON text (8 lowercase hex digits), one space, the JSON
object (its fields in ``state.py``), a newline::

    3f1c0a9e {"op":"pop","g":"cg","t":"T","q":0,"cur":3,"pt":1764350000000,"it":60000,"ck":0,"ord":0,"m":[[0,0,0],[1,0,212],[2,0,424]]}
    0b7d52c1 {"op":"ack","g":"cg","t":"T","q":0,"o":1,"pt":1764350000000}

Replay reads lines until the first one that is cut short, fails its CRC or does not parse (a write
torn by a crash), truncates the file there and opens it for appending.

Each append is handed to the operating system at once (``os.write``), so a killed process loses
nothing the OS already has. ``fsync``: with SYNC_FLUSH, :meth:`durable` waits for an fsync that
covers the record (one fsync in a worker thread serves every record written before it started);
with ASYNC_FLUSH the owner asks for one (``durable(written, force=True)``) every
``pop_journal_flush_interval_ms``.

Compaction (:meth:`compact`) writes the state's snapshot to ``journal.tmp``, fsyncs it and renames
it over the journal: a crash leaves either file whole.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import zlib
from pathlib import Path
from typing import Any

log = logging.getLogger("brokers.engine.broker.pop")

JOURNAL_FILE = "journal"
CRC_HEX = 8


def encode_line(record: dict[str, Any]) -> bytes:
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"%08x " % (zlib.crc32(text) & 0xFFFFFFFF) + text + b"\n"


def decode_lines(data: bytes) -> tuple[list[dict[str, Any]], int]:
    """The whole records at the start of ``data`` and the byte length they take."""
    records: list[dict[str, Any]] = []
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            break
        line = data[pos:end]
        if len(line) <= CRC_HEX + 1 or line[CRC_HEX : CRC_HEX + 1] != b" ":
            break
        text = line[CRC_HEX + 1 :]
        try:
            if int(line[:CRC_HEX], 16) != zlib.crc32(text) & 0xFFFFFFFF:
                break
            record = json.loads(text)
        except ValueError:
            break
        if not isinstance(record, dict):
            break
        records.append(record)
        pos = end + 1
    return records, pos


class PopJournal:
    def __init__(self, directory: Path, *, sync: bool) -> None:
        self.directory = Path(directory)
        self.path = self.directory / JOURNAL_FILE
        self.sync = sync
        self._fd: int | None = None
        self.size = 0
        self._written = 0  # records handed to the OS
        self._synced = 0  # records covered by an fsync
        self._sync_task: asyncio.Future[Any] | None = None
        self.compactions = 0

    def open(self) -> list[dict[str, Any]]:
        """Replay the journal (truncating a torn tail) and open it for appending."""
        self.directory.mkdir(parents=True, exist_ok=True)
        data = self.path.read_bytes() if self.path.exists() else b""
        records, good = decode_lines(data)
        if good < len(data):
            log.warning(
                "%s: %d bytes after the last whole record (a write torn by a crash) cut off",
                self.path,
                len(data) - good,
            )
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        if good < len(data):
            os.ftruncate(self._fd, good)
            os.fsync(self._fd)
        self.size = good
        return records

    def append(self, records: list[dict[str, Any]]) -> int:
        """Write ``records``; returns the sequence number :meth:`durable` waits for."""
        if self._fd is None:
            raise OSError("the pop journal is closed")
        data = b"".join(encode_line(r) for r in records)
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        self.size += len(data)
        self._written += 1
        return self._written

    async def durable(self, seq: int, *, force: bool = False) -> None:
        """Return once record ``seq`` is on disk (SYNC_FLUSH, or ``force``); at once under ASYNC_FLUSH."""
        if not (self.sync or force):
            return
        while self._synced < seq:
            if self._sync_task is None or self._sync_task.done():
                self._sync_task = asyncio.ensure_future(self._fsync())
            await asyncio.shield(self._sync_task)

    async def _fsync(self) -> None:
        target, fd = self._written, self._fd
        if fd is None:
            raise OSError("the pop journal is closed")
        await asyncio.get_running_loop().run_in_executor(None, os.fsync, fd)
        self._synced = max(self._synced, target)

    @property
    def written(self) -> int:
        return self._written

    @property
    def busy(self) -> bool:
        """An fsync is running in a worker thread (compaction waits: it replaces the file descriptor)."""
        return self._sync_task is not None and not self._sync_task.done()

    def flush(self) -> None:
        """fsync what was written, on this thread (at close)."""
        if self._fd is not None and self._synced < self._written:
            target = self._written
            os.fsync(self._fd)
            self._synced = target

    def compact(self, snapshot: list[dict[str, Any]]) -> None:
        """Replace the journal by ``snapshot`` (the records that rebuild the state)."""
        tmp = self.directory / (JOURNAL_FILE + ".tmp")
        data = b"".join(encode_line(r) for r in snapshot)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        dir_fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        if self._fd is not None:
            os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND, 0o600)
        self.size = len(data)
        self._synced = self._written
        self.compactions += 1

    def close(self) -> None:
        if self._fd is None:
            return
        try:
            self.flush()
        finally:
            os.close(self._fd)
            self._fd = None

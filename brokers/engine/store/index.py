"""IndexService: find messages by key (each KEYS entry and the UNIQ_KEY) within a time range.

An index file (RocketMQ's ``IndexFile``) is a hash table with chained items, named by its
creation time ``yyyyMMddHHmmssSSS`` (local time)::

    header (40 bytes)
      0   8  beginTimestamp    store time of the first indexed message
      8   8  endTimestamp      store time of the last indexed message
      16  8  beginPhyOffset
      24  8  endPhyOffset
      32  4  hashSlotCount     slots in use
      36  4  indexCount        next item number; starts at 1 (item 0 is unused)
    slots: max_index_hash_slots x 4-byte item numbers (0 = empty), at offset 40
    items: max_index_count x 20 bytes, at offset 40 + slots x 4
      0   4  key hash          |Java hashCode| of "<topic>#<key>" (0 for Integer.MIN_VALUE)
      4   8  commit log offset
      12  4  time diff         (store time - beginTimestamp) // 1000, seconds, clamped to [0, 2^31-1]
      16  4  previous item     in this slot's chain (0 = end)

A slot holds the newest item of its chain, so a lookup walks from newest to oldest. Hits are hash
hits: :meth:`MessageStore.query_message` re-checks topic and key on the record.

Writes go through ``pwrite`` (the map is read-only). Slots are written at random places, so the
header and the whole slot table get their blocks when a file is created; items are allocated a
chunk ahead (:meth:`IndexService.ensure_room`, called by the put path before the record is
written): a full disk fails the put before anything is written, never a write into a hole.
"""
from __future__ import annotations

import logging
import os
import struct
import threading
import time
from typing import Callable, Sequence

from brokers.engine.common.message_codec import java_hash_extend
from brokers.engine.store.file_io import OS_FILE_IO, FileIO
from brokers.engine.store.mapped_file import MappedFile

log = logging.getLogger(__name__)

INDEX_HEADER_SIZE = 40
HASH_SLOT_SIZE = 4
INDEX_ITEM_SIZE = 20
_HEADER = struct.Struct(">qqqqii")
assert _HEADER.size == INDEX_HEADER_SIZE
_ITEM = struct.Struct(">iqii")
assert _ITEM.size == INDEX_ITEM_SIZE
_SLOT = struct.Struct(">i")
_INVALID_INDEX = 0
_MAX_TIME_DIFF = 0x7FFFFFFF
ALLOCATE_CHUNK = 256 << 10  # item blocks allocated ahead (13,107 items)


_PREFIX_HASHES: dict[str, int] = {}  # topic -> unsigned hash of "<topic>#"


def key_hash(topic: str, key: str) -> int:
    """Return the index hash of ``<topic>#<key>``: |Java hashCode|, 0 for Integer.MIN_VALUE.

    >>> key_hash("TopicTest", "KEY1")
    1656969516
    """
    prefix = _PREFIX_HASHES.get(topic)
    if prefix is None:
        prefix = java_hash_extend(0, topic + "#")
        if len(_PREFIX_HASHES) < 100_000:
            _PREFIX_HASHES[topic] = prefix
    h = java_hash_extend(prefix, key)
    if h & 0x80000000:
        h = (1 << 32) - h  # |negative int|; Integer.MIN_VALUE maps to 2**31, i.e. stays negative
        if h == 1 << 31:
            return 0
    return h


class IndexFile:
    def __init__(self, path: str, slots: int, max_count: int, *, create: bool, io: FileIO = OS_FILE_IO) -> None:
        self.path = path
        self.slots = slots
        self.max_count = max_count
        size = INDEX_HEADER_SIZE + slots * HASH_SLOT_SIZE + max_count * INDEX_ITEM_SIZE
        self.mapped = MappedFile(path, 0, size, create=create, io=io)
        self._items_at = INDEX_HEADER_SIZE + slots * HASH_SLOT_SIZE
        self.index_count = 0
        if create:
            try:  # the header and every slot (written at random places) get blocks before any access:
                self.ensure_items(1)  # on tmpfs even reading a hole through a map takes a page
            except BaseException:
                self.mapped.destroy()
                raise
        (self.begin_timestamp, self.end_timestamp, self.begin_phy_offset, self.end_phy_offset,
         self.hash_slot_count, self.index_count) = _HEADER.unpack(self.mapped.handle.pread(INDEX_HEADER_SIZE, 0))
        if self.index_count <= 0:
            self.index_count = 1
            self._write_header()
        self._dirty = create

    def ensure_items(self, count: int) -> None:
        """Have blocks for the header, the slots and items up to number ``count`` (ENOSPC raises)."""
        self.mapped.ensure_allocated(self._items_at + min(count + 1, self.max_count) * INDEX_ITEM_SIZE,
                                     ALLOCATE_CHUNK)

    def room_ensured(self, count: int) -> bool:
        return self._items_at + min(count + 1, self.max_count) * INDEX_ITEM_SIZE <= self.mapped.allocated

    def _write_header(self) -> None:
        self.mapped.write(0, _HEADER.pack(self.begin_timestamp, self.end_timestamp, self.begin_phy_offset,
                                          self.end_phy_offset, self.hash_slot_count, self.index_count))

    def is_full(self) -> bool:
        return self.index_count >= self.max_count

    def put_items(self, items: Sequence[tuple[int, int]], store_timestamp: int) -> int:
        """Index (key hash, commit log offset) pairs stored at ``store_timestamp``; return how
        many fitted before the file filled. The items go in one write, then the slots they
        change, then the header (one write for all of them)."""
        mm = self.mapped.mm
        slots = self.slots
        begin = self.begin_timestamp
        if begin <= 0:
            diff = 0
        else:
            diff = min(max((store_timestamp - begin) // 1000, 0), _MAX_TIME_DIFF)
        first = count = self.index_count
        room = self.max_count - count
        if room <= 0:
            return 0
        if len(items) > room:
            items = items[:room]
        new_slots: dict[int, int] = {}  # slot position -> item number written to it
        packed = []
        for h, phy_offset in items:
            slot_pos = INDEX_HEADER_SIZE + (h % slots) * HASH_SLOT_SIZE
            slot_value = new_slots.get(slot_pos)
            if slot_value is None:
                (slot_value,) = _SLOT.unpack_from(mm, slot_pos)
                if slot_value <= _INVALID_INDEX or slot_value > count:
                    slot_value = _INVALID_INDEX
            packed.append(_ITEM.pack(h, phy_offset, diff, slot_value))
            new_slots[slot_pos] = count
            if slot_value == _INVALID_INDEX:
                self.hash_slot_count += 1
            count += 1
        self.mapped.write(self._items_at + first * INDEX_ITEM_SIZE, b"".join(packed))
        for slot_pos, item in new_slots.items():
            self.mapped.write(slot_pos, _SLOT.pack(item))
        if first <= 1:
            self.begin_phy_offset = items[0][1]
            self.begin_timestamp = store_timestamp
        self.index_count = count
        self.end_phy_offset = items[-1][1]
        self.end_timestamp = store_timestamp
        self._write_header()
        self._dirty = True
        return len(items)

    def time_matched(self, begin: int, end: int) -> bool:
        b, e = self.begin_timestamp, self.end_timestamp
        return (begin < b and end > e) or (b <= begin <= e) or (b <= end <= e)

    def select(self, h: int, begin: int, end: int, max_num: int, out: list[int]) -> None:
        """Append commit log offsets of items with hash ``h`` stored within [begin, end]."""
        mm = self.mapped.mm
        (item,) = _SLOT.unpack_from(mm, INDEX_HEADER_SIZE + (h % self.slots) * HASH_SLOT_SIZE)
        count = self.index_count
        if item <= _INVALID_INDEX or item >= count:
            return
        seen = 0
        while len(out) < max_num and seen < count:
            seen += 1
            h_read, phy, diff, prev = _ITEM.unpack_from(mm, self._items_at + item * INDEX_ITEM_SIZE)
            if diff < 0:
                break
            t = self.begin_timestamp + diff * 1000
            if h_read == h and begin <= t <= end:
                out.append(phy)
            if prev <= _INVALID_INDEX or prev >= count or prev == item or t < begin:
                break
            item = prev

    def clamp(self, phy_end: int) -> None:
        """After recovery cut the commit log at ``phy_end``, do not claim offsets past it."""
        if self.end_phy_offset > phy_end:
            self.end_phy_offset = phy_end
            self._write_header()

    def mark_dirty(self) -> None:
        self._dirty = True

    def flush(self) -> bool:
        if not self._dirty:
            return False
        self._dirty = False
        self.mapped.flush()
        return True

    def close(self) -> None:
        self.mapped.close()

    def destroy(self) -> None:
        self.mapped.destroy()


def _time_name(ms: int) -> str:
    t = time.localtime(ms / 1000)
    return time.strftime("%Y%m%d%H%M%S", t) + f"{ms % 1000:03d}"


class IndexService:
    """The index files of a store: the newest takes new keys, queries search newest first."""

    def __init__(self, directory: str, slots: int, max_count: int, now_ms: Callable[[], int], *,
                 io: FileIO = OS_FILE_IO) -> None:
        self.directory = directory
        self.io = io
        self.slots = slots
        self.max_count = max_count
        self._now_ms = now_ms
        self.files: list[IndexFile] = []
        self.last_indexed_timestamp = 0  # store time of the last message indexed

    def load(self) -> None:
        os.makedirs(self.directory, exist_ok=True)
        self.files = []
        names = sorted(n for n in os.listdir(self.directory) if len(n) == 17 and n.isdigit())
        for name in names:
            path = os.path.join(self.directory, name)
            try:
                self.files.append(IndexFile(path, self.slots, self.max_count, create=False, io=self.io))
            except Exception as exc:  # a wrong-sized index file is rebuilt-able data, not fatal
                log.error("dropping unreadable index file %s: %s", path, exc)
                try:
                    self.io.unlink(path)
                except OSError:
                    pass
        if self.files:
            self.last_indexed_timestamp = self.files[-1].end_timestamp

    @property
    def end_phy_offset(self) -> int:
        """Commit log offset of the last indexed message (-1 when nothing is indexed)."""
        for f in reversed(self.files):
            if f.index_count > 1:
                return f.end_phy_offset
        return -1

    def _new_file(self) -> IndexFile:
        ms = self._now_ms()
        name = _time_name(ms)
        while os.path.exists(os.path.join(self.directory, name)) or (
                self.files and name <= os.path.basename(self.files[-1].path)):
            ms += 1
            name = _time_name(ms)
        f = IndexFile(os.path.join(self.directory, name), self.slots, self.max_count, create=True, io=self.io)
        self.files.append(f)
        return f

    def ensure_room(self, count: int) -> None:
        """Make sure ``count`` more items can be indexed without running out of disk: the
        newest file's item blocks, or a new file (raise OSError: ENOSPC). A batch that does not
        fit what is left of the newest file goes whole to a new one."""
        f = self.files[-1] if self.files else None
        if f is not None and f.index_count + count <= f.max_count and f.room_ensured(f.index_count + count):
            return
        if f is None or f.index_count + count > f.max_count:
            f = self._new_file()
        f.ensure_items(f.index_count + count)

    def build_index(self, hashes: list[int], phy_offset: int, store_timestamp: int) -> None:
        """Index one message under the given key hashes (see :func:`key_hash`)."""
        self.build_index_items([(h, phy_offset) for h in hashes], store_timestamp)

    def build_index_items(self, items: Sequence[tuple[int, int]], store_timestamp: int) -> None:
        """Index (key hash, commit log offset) pairs of messages stored at ``store_timestamp``
        (a batch: one call, one header write per index file)."""
        while items:
            f = self.files[-1] if self.files and not self.files[-1].is_full() else self._new_file()
            done = f.put_items(items, store_timestamp)
            items = items[done:]
        self.last_indexed_timestamp = store_timestamp

    def query(self, topic: str, key: str, max_num: int, begin: int, end: int) -> list[int]:
        """Return commit log offsets of messages indexed under ``topic#key`` (newest first)."""
        h = key_hash(topic, key)
        out: list[int] = []
        for f in reversed(list(self.files)):
            if len(out) >= max_num:
                break
            if f.index_count <= 1:
                continue
            if f.time_matched(begin, end):
                f.select(h, begin, end, max_num, out)
            if f.begin_timestamp < begin:
                break
        return out

    def truncate(self, phy_end: int) -> None:
        """Drop index files that start past ``phy_end``; clamp the newest to it."""
        while self.files and self.files[-1].index_count > 1 and self.files[-1].begin_phy_offset >= phy_end:
            f = self.files.pop()
            log.warning("deleting index file %s: it only indexes records past %d", f.path, phy_end)
            f.destroy()
        if self.files:
            self.files[-1].clamp(phy_end)

    def retire_expired_file(self, min_phy: int, lock: threading.Lock) -> IndexFile | None:
        """Drop the oldest file (never the newest) when every message it indexes is gone from the
        commit log (its end offset below ``min_phy``; RocketMQ's deleteExpiredFile); return it
        for the caller to unlink and unmap, or None."""
        with lock:
            files = self.files
            if len(files) < 2 or files[0].end_phy_offset >= min_phy:
                return None
            self.files = files[1:]  # a new list: a query's snapshot stays consistent
        return files[0]

    def mark_unflushed(self) -> None:
        """Have the next flush sync the newest file (after a crash it may hold unsynced items)."""
        if self.files:
            self.files[-1].mark_dirty()

    def flush(self, lock: threading.Lock) -> int:
        with lock:
            files = list(self.files)
        return sum(1 for f in files if f.flush())

    def close(self) -> None:
        for f in self.files:
            f.close()
        self.files = []

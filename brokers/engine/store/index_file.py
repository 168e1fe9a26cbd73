"""IndexFile: one file of the key index (see ``index.py`` for the service over them).

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

What a power cut leaves must be self-consistent, since recovery trusts the header's
endPhyOffset (records after it are re-indexed, earlier ones are not). So a put writes only its
items; the slots it changes wait in memory (``_pending``, which :meth:`IndexFile.select` and the
next put consult before the map) and the header fields are kept in memory (readers use them).
:meth:`IndexFile.flush` then (1) syncs the items, (2) writes the pending slots and syncs, (3)
writes the header and syncs: a slot on disk points only at synced items, and the header counts
only items whose slots are on disk. A cut between (2) and (3) leaves slots pointing past the
header's count at synced items; :meth:`IndexFile.repair_slots` (after a crash, before recovery
re-indexes over those item numbers) follows each such slot's chain back below the count. When a
file fills, it is flushed before the next one is created, so only the newest file can have been
cut mid-flush.
"""

from __future__ import annotations

import logging
import struct
import sys
import threading
from array import array
from typing import Sequence

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
_SLOT_RUN_GAP = 1024  # bytes: pending slots this close are written together at a flush (see _write_slots)


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
    """One index file; the header fields and the unflushed slots live in memory (module docstring)."""

    def __init__(self, path: str, slots: int, max_count: int, *, create: bool, io: FileIO = OS_FILE_IO) -> None:
        self.path = path
        self.slots = slots
        self.max_count = max_count
        size = INDEX_HEADER_SIZE + slots * HASH_SLOT_SIZE + max_count * INDEX_ITEM_SIZE
        self.mapped = MappedFile(path, 0, size, create=create, io=io)
        self._items_at = INDEX_HEADER_SIZE + slots * HASH_SLOT_SIZE
        self.index_count = 0
        self.begin_timestamp: int
        self.end_timestamp: int
        self.begin_phy_offset: int
        self.end_phy_offset: int
        self.hash_slot_count: int
        if create:
            try:  # the header and every slot (written at random places) get blocks before any access:
                self.ensure_items(1)  # on tmpfs even reading a hole through a map takes a page
            except BaseException:
                self.mapped.destroy()
                raise
        (
            self.begin_timestamp,
            self.end_timestamp,
            self.begin_phy_offset,
            self.end_phy_offset,
            self.hash_slot_count,
            self.index_count,
        ) = _HEADER.unpack(self.mapped.handle.pread(INDEX_HEADER_SIZE, 0))
        if self.index_count <= 0:  # a new file (or one whose first header never reached the disk)
            self.index_count = 1
            self.mapped.write(0, self._header())
        elif 1 < self.index_count <= max_count:
            # A cut can tear the header write (endPhyOffset new, indexCount old): claim no record
            # past the last item counted, so recovery re-indexes the rest.
            (_h, last_phy, _diff, _prev) = _ITEM.unpack_from(
                self.mapped.mm, self._items_at + (self.index_count - 1) * INDEX_ITEM_SIZE
            )
            self.end_phy_offset = min(self.end_phy_offset, last_phy)
        self._pending: dict[int, int] = {}  # slot position -> item number, not written yet
        self._state_lock = threading.Lock()  # pending slots and header fields vs. a flush's snapshot
        self._flush_lock = threading.Lock()  # one flush at a time (flush thread, file roll, close)
        self._version = 1 if create else 0  # bumped by every change the disk does not have yet
        self._flushed_version = 0

    def ensure_items(self, count: int) -> None:
        """Have blocks for the header, the slots and items up to number ``count`` (ENOSPC raises)."""
        self.mapped.ensure_allocated(self._items_at + min(count + 1, self.max_count) * INDEX_ITEM_SIZE, ALLOCATE_CHUNK)

    def room_ensured(self, count: int) -> bool:
        return self._items_at + min(count + 1, self.max_count) * INDEX_ITEM_SIZE <= self.mapped.allocated

    def _header(self) -> bytes:
        return _HEADER.pack(
            self.begin_timestamp,
            self.end_timestamp,
            self.begin_phy_offset,
            self.end_phy_offset,
            self.hash_slot_count,
            self.index_count,
        )

    def is_full(self) -> bool:
        return self.index_count >= self.max_count

    def _slot(self, slot_pos: int) -> int:
        """The newest item of a slot's chain: the unflushed value, else the one on disk."""
        item = self._pending.get(slot_pos)
        if item is None:
            (item,) = _SLOT.unpack_from(self.mapped.mm, slot_pos)
        return item

    def put_items(self, items: Sequence[tuple[int, int]], store_timestamp: int) -> int:
        """Index (key hash, commit log offset) pairs stored at ``store_timestamp``; return how
        many fitted before the file filled. The items go in one write; the slots they change and
        the header wait for :meth:`flush`."""
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
        used = 0
        for h, phy_offset in items:
            slot_pos = INDEX_HEADER_SIZE + (h % slots) * HASH_SLOT_SIZE
            slot_value = new_slots.get(slot_pos)
            if slot_value is None:
                slot_value = self._slot(slot_pos)
                if slot_value <= _INVALID_INDEX or slot_value >= first:
                    slot_value = _INVALID_INDEX
            packed.append(_ITEM.pack(h, phy_offset, diff, slot_value))
            new_slots[slot_pos] = count
            if slot_value == _INVALID_INDEX:
                used += 1
            count += 1
        self.mapped.write(self._items_at + first * INDEX_ITEM_SIZE, b"".join(packed))
        with self._state_lock:
            self._pending.update(new_slots)
            if first <= 1:
                self.begin_phy_offset = items[0][1]
                self.begin_timestamp = store_timestamp
            self.hash_slot_count += used
            self.index_count = count
            self.end_phy_offset = items[-1][1]
            self.end_timestamp = store_timestamp
            self._version += 1
        return len(items)

    def time_matched(self, begin: int, end: int) -> bool:
        b, e = self.begin_timestamp, self.end_timestamp
        return (begin < b and end > e) or (b <= begin <= e) or (b <= end <= e)

    def select(self, h: int, begin: int, end: int, max_num: int, out: list[int]) -> None:
        """Append commit log offsets of items with hash ``h`` stored within [begin, end]."""
        mm = self.mapped.mm
        count = self.index_count
        item = self._slot(INDEX_HEADER_SIZE + (h % self.slots) * HASH_SLOT_SIZE)
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
        """After recovery cut the commit log at ``phy_end``, do not claim offsets past it (the
        header on disk says so at the next flush)."""
        if self.end_phy_offset > phy_end:
            with self._state_lock:
                self.end_phy_offset = phy_end
                self._version += 1

    def mark_dirty(self) -> None:
        with self._state_lock:
            self._version += 1

    def repair_slots(self) -> int:
        """After a crash: point every slot on disk that names an item at or past the header's
        count (a flush cut between writing the slots and the header) at the newest item of its
        chain below the count, and sync that before anything overwrites those items. Returns
        the number of slots repaired."""
        count = self.index_count
        table = array("i", self.mapped.mm[INDEX_HEADER_SIZE : self._items_at])
        if sys.byteorder == "little":
            table.byteswap()
        if not table or max(table) < count:
            return 0
        repaired = 0
        for slot, item in enumerate(table):
            if item >= count:
                self.mapped.write(
                    INDEX_HEADER_SIZE + slot * HASH_SLOT_SIZE, _SLOT.pack(self._newest_below(slot, item, count))
                )
                repaired += 1
        self.mapped.flush()
        log.warning("index file %s: %d slot(s) pointed past its %d items; repaired", self.path, repaired, count)
        return repaired

    def _newest_below(self, slot: int, item: int, count: int) -> int:
        """The newest item of ``slot``'s chain below ``count``, from the synced ``item`` (item
        by item back; a link that does not fit, only torn bytes make one, means a scan)."""
        mm = self.mapped.mm
        while _INVALID_INDEX < item < self.max_count:
            prev: int
            h, _phy, _diff, prev = _ITEM.unpack_from(mm, self._items_at + item * INDEX_ITEM_SIZE)
            if h % self.slots != slot or prev >= item:
                break
            if prev < count:
                if prev <= _INVALID_INDEX:
                    return _INVALID_INDEX
                (h,) = _SLOT.unpack_from(mm, self._items_at + prev * INDEX_ITEM_SIZE)
                if h % self.slots == slot:
                    return prev
                break
            item = prev
        for candidate in range(count - 1, _INVALID_INDEX, -1):
            (h,) = _SLOT.unpack_from(mm, self._items_at + candidate * INDEX_ITEM_SIZE)
            if h % self.slots == slot:
                return candidate
        return _INVALID_INDEX

    def flush(self) -> bool:
        """Put what was indexed on disk so that every state a cut leaves is consistent: sync the
        items, write the pending slots and sync, write the header and sync. Return False when
        there was nothing to do. Raises OSError (the next flush retries)."""
        with self._flush_lock:
            with self._state_lock:
                version = self._version
                if version == self._flushed_version:
                    return False
                header = self._header()
                slots = dict(self._pending)
            self.mapped.flush()  # (1) the items the slots and the header will name
            if slots:
                self._write_slots(slots)
                self.mapped.flush()  # (2) the slots before the header that counts their items
            self.mapped.write(0, header)
            self.mapped.flush()  # (3)
            with self._state_lock:
                pending = self._pending
                for slot_pos, item in slots.items():
                    if pending.get(slot_pos) == item:  # a put since the snapshot keeps its newer value
                        del pending[slot_pos]
                self._flushed_version = version
            return True

    def _write_slots(self, slots: dict[int, int]) -> None:
        """Write the given slots, nearby ones in one write (the slots between keep their value:
        a pending one is not in the map yet).

        A 4-byte write dirties its whole page anyway, so rewriting the bytes between two slots
        up to ``_SLOT_RUN_GAP`` apart costs no more disk than the two writes and saves a system
        call: with 80,000 random slots of a 5M-slot table (a second of sends at full speed),
        1 KiB runs took 55 ms of CPU where 64-byte runs took 130 ms."""
        mm = self.mapped.mm
        write = self.mapped.write
        pack_into = _SLOT.pack_into
        positions = sorted(slots)
        ends = [i for i, (a, b) in enumerate(zip(positions, positions[1:]), 1) if b - a > _SLOT_RUN_GAP]
        ends.append(len(positions))
        first = 0
        for end in ends:
            start, stop = positions[first], positions[end - 1] + HASH_SLOT_SIZE
            run = bytearray(mm[start:stop])
            for pos in positions[first:end]:
                pack_into(run, pos - start, slots[pos])
            write(start, run)
            first = end

    def close(self) -> None:
        self.mapped.close()

    def destroy(self) -> None:
        self.mapped.destroy()

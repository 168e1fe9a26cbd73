"""The group epoch history of one broker's store: ``<store_dir>/epoch``.

Every change of master raises the broker group's epoch. Each broker records the epochs its
commit log went through and where each began, so two brokers can tell where their logs stop
being the same (a returning old master truncates its log there; RocketMQ 5.x's
``EpochFileCache`` does the same job).

The file is text, UTF-8, one entry a line, oldest first, after a fixed first line::

    gantry-epochs 1
    0 0
    1 52428
    2 104857

Each entry line is ``<epoch> <start offset>``, two non-negative decimal integers separated by
one space: the epoch and the physical commit-log offset where the first byte written under that
epoch sits. Epochs strictly increase; start offsets never decrease. A store without the file
has the implicit history ``[(0, 0)]`` (a RocketMQ 4.x store, or one from before epochs). The
file is written whole to ``epoch.tmp`` (mode 0600), fsynced, then renamed over ``epoch`` and
the directory fsynced, so a crash leaves the old or the new history, never half of one.

:func:`common_point` is the rule the returning broker follows: the offset up to which its log
and the new master's are the same bytes (see the function).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from brokers.engine.store.file_io import OS_FILE_IO, FileIO, makedirs_private, write_file_atomically

HEADER = "gantry-epochs 1"
FILE_NAME = "epoch"
MAX_ENTRIES = 4096  # far more than any group's changes of master; bounds what a peer may send


class EpochFileError(ValueError):
    """The epoch file or a history does not follow the format (the message says where)."""


@dataclass(frozen=True, slots=True)
class EpochEntry:
    epoch: int
    start_offset: int


INITIAL = (EpochEntry(0, 0),)


def check_history(entries: tuple[EpochEntry, ...]) -> tuple[EpochEntry, ...]:
    """Return ``entries`` if epochs strictly increase and offsets never decrease, else raise."""
    if not entries:
        raise EpochFileError("an epoch history has at least one entry")
    if len(entries) > MAX_ENTRIES:
        raise EpochFileError(f"{len(entries)} epochs is more than {MAX_ENTRIES}")
    prev: EpochEntry | None = None
    for e in entries:
        if e.epoch < 0 or e.start_offset < 0:
            raise EpochFileError(f"negative epoch or offset in {e}")
        if prev is not None and (e.epoch <= prev.epoch or e.start_offset < prev.start_offset):
            raise EpochFileError(
                f"epoch {e.epoch} at {e.start_offset} does not follow epoch {prev.epoch} at {prev.start_offset}"
            )
        prev = e
    return entries


def parse(text: str) -> tuple[EpochEntry, ...]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != HEADER:
        raise EpochFileError(f"first line is not {HEADER!r}")
    entries = []
    for n, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise EpochFileError(f"line {n} is not '<epoch> <start offset>': {line!r}")
        entries.append(EpochEntry(int(parts[0]), int(parts[1])))
    return check_history(tuple(entries))


def render(entries: tuple[EpochEntry, ...]) -> str:
    return HEADER + "\n" + "".join(f"{e.epoch} {e.start_offset}\n" for e in entries)


class EpochFile:
    """The history in memory and on disk; every change is written through atomically."""

    def __init__(self, store_dir: str, io: FileIO = OS_FILE_IO) -> None:
        self.io = io
        self.directory = store_dir
        self.path = os.path.join(store_dir, FILE_NAME)
        self.entries: tuple[EpochEntry, ...] = INITIAL

    def load(self) -> tuple[EpochEntry, ...]:
        try:
            with open(self.path, encoding="utf-8") as fh:
                text = fh.read()
        except FileNotFoundError:
            self.entries = INITIAL
            return self.entries
        try:
            self.entries = parse(text)
        except EpochFileError as exc:
            raise EpochFileError(f"{self.path}: {exc}") from None
        return self.entries

    @property
    def epoch(self) -> int:
        return self.entries[-1].epoch

    def replace(self, entries: tuple[EpochEntry, ...]) -> None:
        """Take ``entries`` as the whole history (a slave adopting its master's)."""
        entries = check_history(tuple(entries))
        if entries == self.entries and os.path.exists(self.path):
            return
        self._write(entries)
        self.entries = entries

    def begin(self, epoch: int, start_offset: int) -> None:
        """Start ``epoch`` at ``start_offset`` (a promotion); entries starting past it are
        dropped first (this log holds none of their bytes)."""
        kept = tuple(e for e in self.entries if e.start_offset <= start_offset) or INITIAL
        self.replace(kept + (EpochEntry(epoch, start_offset),))

    def _write(self, entries: tuple[EpochEntry, ...]) -> None:
        makedirs_private(self.directory)
        write_file_atomically(self.io, self.path, render(entries).encode("utf-8"), 0o600)


def common_point(mine: tuple[EpochEntry, ...], my_end: int, theirs: tuple[EpochEntry, ...], their_end: int) -> int:
    """The offset up to which this log and the master's hold the same bytes.

    Walk both histories from the oldest entry while they agree (same epoch, same start). The
    first entry of mine that the master does not share starts bytes the master never had, so
    the common point is at most its start; within the last shared epoch, each log holds that
    epoch's bytes up to where its next epoch starts (or its end), so the common point is the
    smaller of the two. With no shared entry at all, nothing is known to be common: 0.
    """
    shared = 0
    while shared < len(mine) and shared < len(theirs) and mine[shared] == theirs[shared]:
        shared += 1
    if shared == 0:
        return 0
    mine_until = mine[shared].start_offset if shared < len(mine) else my_end
    theirs_until = theirs[shared].start_offset if shared < len(theirs) else their_end
    return max(0, min(mine_until, theirs_until, my_end))

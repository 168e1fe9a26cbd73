"""Errors the store raises to its owner (the broker, tools, tests)."""

from __future__ import annotations


class StoreError(Exception):
    """Base class for store failures that stop the store rather than fail one request."""


class StoreCorruptionError(StoreError):
    """Data on disk is damaged in a way recovery must not repair on its own.

    Raised for a bad record in the middle of the commit log (valid records follow it), a
    segment file of the wrong size, or a gap in a file sequence. ``path`` is the file and
    ``offset`` the physical (or logical byte) offset where the damage starts.
    """

    def __init__(self, message: str, *, path: str, offset: int) -> None:
        super().__init__(message)
        self.path = path
        self.offset = offset


class StoreLockedError(StoreError):
    """Another store (in this or another process) holds the directory's lock file."""


class StoreNotOpenError(StoreError):
    """The store was used before ``open()`` or after ``close()``."""

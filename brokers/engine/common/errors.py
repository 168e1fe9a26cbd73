"""Errors of the byte codecs in ``brokers.engine.common`` (records, batch bodies)."""

from __future__ import annotations


class RecordFormatError(ValueError):
    """Bytes that do not form a message record (or batch entry); the message says where."""

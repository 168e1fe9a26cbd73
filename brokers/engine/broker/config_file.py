"""Atomic JSON config files (topics.json, consumerOffset.json, subscriptionGroup.json, ...).

A write never leaves a half-written file behind: the new content goes to ``<file>.tmp`` in
the same directory, is flushed and fsynced, the current file is kept as ``<file>.bak`` (as
RocketMQ does), the temp file is renamed over the original with ``os.replace`` and the
directory is fsynced so the rename itself survives a crash. A read falls back to the ``.bak``
when the main file is missing or does not parse; Java-written files (bare integer keys) are
read with the tolerant parser.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from brokers.engine.common import json_compat
from brokers.engine.store.file_io import OS_FILE_IO, FileIO, makedirs_private, write_file_atomically

log = logging.getLogger("brokers.engine.broker")


def write_text_atomic(path: Path | str, text: str, *, keep_backup: bool = True, io: FileIO = OS_FILE_IO) -> None:
    """Replace ``path`` with ``text`` atomically (tmp + fsync + rename + fsync dir), every write
    through ``io`` (the store's file seam: a full disk raises OSError and leaves ``path`` as it was)."""
    path = Path(path)
    makedirs_private(str(path.parent))
    backup = (lambda: _keep_backup(path, io)) if keep_backup and path.exists() else None
    write_file_atomically(io, str(path), text.encode("utf-8"), before_replace=backup)


def _keep_backup(path: Path, io: FileIO) -> None:
    """Make ``<file>.bak`` the current content while ``path`` itself stays in place."""
    bak = path.with_name(path.name + ".bak")
    link = path.with_name(path.name + ".bak.tmp")
    try:
        io.unlink(str(link))
        try:
            os.link(path, link)  # a second name for the old content, no copy
        except OSError:
            write_text_atomic(link, path.read_text(encoding="utf-8"), keep_backup=False, io=io)
        io.replace(str(link), str(bak))
    except OSError as exc:
        log.warning("cannot keep %s as backup: %s", path, exc)


def write_json_atomic(
    path: Path | str, value: Any, *, pretty: bool = True, keep_backup: bool = True, io: FileIO = OS_FILE_IO
) -> None:
    """Serialize in fastjson's dialect (pretty: tab-indented, as RocketMQ writes) and store atomically."""
    write_text_atomic(path, json_compat.dumps(value, pretty=pretty), keep_backup=keep_backup, io=io)


def read_json(path: Path | str) -> Any | None:
    """Return the parsed content of ``path`` (or of its ``.bak``), or None when neither is usable."""
    path = Path(path)
    for candidate in (path, path.with_name(path.name + ".bak")):
        try:
            text = candidate.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.warning("cannot read %s: %s", candidate, exc)
            continue
        if not text.strip():
            continue
        try:
            return json_compat.loads(text)
        except ValueError as exc:
            log.warning("%s does not parse (%s); trying the backup", candidate, exc)
    return None

"""Fixtures for the store tests: a manual clock and stores opened in tmp_path."""

from __future__ import annotations

from typing import Callable

import pytest

from brokers.engine.common.clock import ManualClock
from brokers.engine.store import DefaultMessageStore
from brokers.engine.store.file_io import OS_FILE_IO, FileIO
from tests.brokers.engine.store._support import make_config


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def open_store(tmp_path, clock) -> Callable[..., DefaultMessageStore]:
    """Open stores on tmp_path/store; every store still open at the end is closed."""
    opened: list[DefaultMessageStore] = []

    def factory(file_io: FileIO = OS_FILE_IO, **overrides) -> DefaultMessageStore:
        store = DefaultMessageStore(make_config(tmp_path / "store", **overrides), clock=clock, file_io=file_io)
        store.open()
        opened.append(store)
        return store

    yield factory
    for store in opened:
        if store.running:
            store.close()

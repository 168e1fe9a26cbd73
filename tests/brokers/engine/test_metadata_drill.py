"""A topic created on a SYNC_MASTER that dies seconds later: every acknowledged message is read from the slave.

Two cycles of the drill in ``_metadata_drill.py`` (bench/metadata_drill.py runs twenty). Before the
master pushed config changes and the slave derived missing topics from its queues, the slave
answered ``topic[...] not exist`` for every queue, forever.
"""

from __future__ import annotations

import pytest

from tests.brokers.engine._group_procs import NamesrvProc
from tests.brokers.engine._metadata_drill import run_cycle


@pytest.mark.slow
def test_messages_acknowledged_before_the_master_dies_stay_readable_on_the_slave(tmp_path):
    namesrv = NamesrvProc(tmp_path).start()
    try:
        results = [run_cycle(tmp_path, namesrv, cycle, messages=100) for cycle in range(2)]
    finally:
        namesrv.stop()
    for result in results:
        assert result.acknowledged == 100, result
        assert result.seconds_from_create_to_kill < 10, (
            result
        )  # inside the slave's 10 s periodic copy: the gap under test
        assert result.unreadable == 0, result

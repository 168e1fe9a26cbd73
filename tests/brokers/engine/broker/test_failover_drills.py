"""The broker-group failover drills 1, 2 and 5 with real processes (name server and brokers as
``python -m brokers.engine`` subprocesses on loopback, stores under tmp_path), fewer cycles than
the full drill's 20; ``bench/failover_drill.py`` runs the full drill and reports it.

1. SYNC_MASTER + slave under 4 producers: the master SIGKILLed and its store deleted, the slave
   promoted through GANTRY_PROMOTE_SLAVE, producing goes on to it: no acknowledged message lost.
2. ASYNC_MASTER: the same; every loss was acknowledged within the measured replication lag.
5. The old master restarted on its store after a promotion answers no send SEND_OK, rejoins as a
   slave, and its log says what it truncated.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[4] / "bench" / "failover_drill.py"
_spec = importlib.util.spec_from_file_location("failover_drill", _PATH)
drill = sys.modules.setdefault("failover_drill", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(drill)

CYCLES = 3


@pytest.mark.slow
def test_sync_master_failover_loses_no_acknowledged_message(tmp_path):
    result = asyncio.run(asyncio.wait_for(drill.failover(tmp_path, "SYNC_MASTER", CYCLES, 1.5), 120))
    print(result.summary())
    assert result.acked > 0 and result.lost == 0
    assert [p["newEpoch"] for p in result.plans] == list(range(1, CYCLES + 1)) and result.forced == 0


@pytest.mark.slow
def test_async_master_failover_loses_only_what_the_replication_lag_held(tmp_path):
    result = asyncio.run(asyncio.wait_for(drill.failover(tmp_path, "ASYNC_MASTER", CYCLES, 1.5), 120))
    print(result.summary())
    assert result.acked > 0 and result.lost_outside_lag == 0
    assert [p["newEpoch"] for p in result.plans] == list(range(1, CYCLES + 1))


@pytest.mark.slow
def test_a_restarted_old_master_takes_no_send_and_truncates_its_tail(tmp_path):
    outcome = asyncio.run(asyncio.wait_for(drill.stale_master(tmp_path), 120))
    print(outcome)
    assert outcome["accepted"] == 0 and set(outcome["tail_answers"]) == {0}
    assert outcome["role_after"] == "SLAVE" and outcome["epoch_after"] == "1"
    log = "\n".join(outcome["log"])
    assert "FENCED" in log and "stale epoch 0 < 1" in log and "rejoins its group as a SLAVE" in log
    assert "TRUNCATED divergent tail" in log and "bytes)" in log and "consume queue units removed" in log

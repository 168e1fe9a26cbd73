"""Property: whatever the workload, retention never deletes a message that is within
``fileReservedTime`` (below the forcible ratio), and a consumer at any offset reads on from
where it was, or from the new min offset when what it had not read yet expired."""

from __future__ import annotations

import tempfile

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from brokers.engine.common.clock import ManualClock
from brokers.engine.store import DefaultMessageStore
from brokers.engine.store.delete_when import _local_ms
from brokers.engine.store.disk_usage import DiskUsage
from brokers.engine.store.results import GetMessageStatus
from tests.brokers.engine.store._support import inner, make_config

QUEUES = 3
put = st.tuples(st.just("put"), st.integers(0, QUEUES - 1), st.integers(1, 40), st.integers(0, 6 * 3600))
clean = st.tuples(st.just("pass"), st.sampled_from([0.10, 0.50, 0.80]), st.just(0), st.just(0))
advance = st.tuples(st.just("advance"), st.integers(0, 40 * 3600), st.just(0), st.just(0))
workloads = st.lists(st.one_of(put, put, clean, advance), min_size=8, max_size=40)


def _check(store: DefaultMessageStore, clock: ManualClock, stored: dict[int, list[int]], reserved_ms: int) -> None:
    now = clock.now_ms()
    for queue_id, stamps in stored.items():
        if not stamps:
            continue
        min_offset = store.get_min_offset_in_queue("T", queue_id)
        for offset, stamp in enumerate(stamps):
            if stamp > now - reserved_ms:  # within retention: still there, at its offset
                assert offset >= min_offset, (queue_id, offset, min_offset)
                r = store.get_message("c", "T", queue_id, offset, 1)
                assert r.status is GetMessageStatus.FOUND and r.next_begin_offset == offset + 1, (
                    queue_id,
                    offset,
                    r.status,
                )
        for committed in range(0, len(stamps) + 1, 3):  # consumers at any offset go on without an error
            r = store.get_message("c", "T", queue_id, committed, 4)
            if committed < min_offset:
                assert r.status is GetMessageStatus.OFFSET_TOO_SMALL and r.next_begin_offset == min_offset
            elif committed < len(stamps):
                assert r.status is GetMessageStatus.FOUND and r.next_begin_offset > committed
            else:
                assert r.status is GetMessageStatus.OFFSET_OVERFLOW_ONE


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=workloads, reserved_h=st.sampled_from([1, 6, 72]), hour=st.integers(0, 23), batch=st.integers(1, 6))
def test_nothing_within_retention_is_deleted(workload, reserved_h, hour, batch):
    with tempfile.TemporaryDirectory() as root:
        clock = ManualClock(_local_ms(2024, 5, 6, 0))
        store = DefaultMessageStore(
            make_config(
                root, file_reserved_time_hours=reserved_h, delete_when=f"{hour:02d}", delete_files_batch_max=batch
            ),
            clock=clock,
        )
        ratio = [0.10]
        store.retention.disk_usage = lambda path: DiskUsage(1000, int(ratio[0] * 1000), 1000 - int(ratio[0] * 1000))
        store.open()
        stored: dict[int, list[int]] = {q: [] for q in range(QUEUES)}
        try:
            for op, a, b, c in workload:
                if op == "put":
                    for _ in range(b):
                        result = store.put_message_sync(inner("T", a, b"m" * 150, keys="k"))
                        assert result.ok and result.queue_offset == len(stored[a])
                        stored[a].append(result.store_timestamp)
                        clock.advance(c / b)
                elif op == "advance":
                    clock.advance(a)
                else:
                    ratio[0] = a  # below diskSpaceCleanForciblyRatio: only expired segments may go
                    store.retention.run_pass()
                    _check(store, clock, stored, reserved_h * 3_600_000)
            store.retention.execute_delete_files_manually()
            _check(store, clock, stored, reserved_h * 3_600_000)
            event("segments deleted" if store.retention.cleaned_files_total else "nothing deleted")
        finally:
            store.close()

"""The POP journal on disk: replay rebuilds the state, a torn or corrupt tail is cut off, compaction
keeps the state; the handle format round-trips; a record's reconsume times are rewritten in place."""

from __future__ import annotations

import asyncio

import pytest

from brokers.engine.broker.pop.extra_info import ExtraInfoError, parse_extra_info
from brokers.engine.broker.pop.journal import PopJournal, encode_line
from brokers.engine.broker.pop.record_fields import record_offsets, with_reconsume_times
from brokers.engine.broker.pop.state import PopState
from brokers.engine.common.message_codec import decode_records, encode_record

POP = {
    "op": "pop",
    "g": "cg",
    "t": "T",
    "q": 0,
    "cur": 3,
    "pt": 1000,
    "it": 500,
    "ck": 0,
    "ord": 0,
    "m": [[0, 0, 0], [1, 0, 100], [2, 0, 200]],
}
ACK = {"op": "ack", "g": "cg", "t": "T", "q": 0, "o": 1, "pt": 1000}


def _replay(directory) -> PopState:
    journal = PopJournal(directory, sync=True)
    state = PopState()
    for record in journal.open():
        state.apply(record)
    journal.close()
    return state


def test_replay_rebuilds_cursor_and_deliveries_in_flight(tmp_path):
    journal = PopJournal(tmp_path, sync=True)
    assert journal.open() == []
    seq = journal.append([POP, ACK])
    asyncio.run(journal.durable(seq))
    journal.close()
    state = _replay(tmp_path)
    qs = state.get(("cg", "T", 0))
    assert qs.cursor == 3 and sorted(qs.inflight) == [0, 2] and qs.committed() == 0
    assert state.inflight_count("cg") == 2


@pytest.mark.parametrize("tail", [b'0badc0de {"op":"ack"', encode_line(ACK)[:-5], b"00000000 " + encode_line(ACK)[9:]])
def test_a_torn_or_corrupt_tail_is_cut_off(tmp_path, tail):
    journal = PopJournal(tmp_path, sync=True)
    journal.open()
    journal.append([POP])
    journal.close()
    good = journal.path.stat().st_size
    with open(journal.path, "ab") as fh:
        fh.write(tail)
    state = _replay(tmp_path)
    assert sorted(state.get(("cg", "T", 0)).inflight) == [0, 1, 2]  # the ack did not survive whole: not applied
    assert journal.path.stat().st_size == good


def test_compaction_keeps_the_state(tmp_path):
    journal = PopJournal(tmp_path, sync=False)
    journal.open()
    state = PopState()
    for record in (POP, ACK):
        state.apply(record)
    journal.append([POP, ACK])
    journal.compact(state.snapshot())
    journal.append([{"op": "ack", "g": "cg", "t": "T", "q": 0, "o": 0, "pt": 1000}])
    journal.close()
    again = _replay(tmp_path)
    assert sorted(again.get(("cg", "T", 0)).inflight) == [2] and again.get(("cg", "T", 0)).cursor == 3


def test_extra_info_round_trip_and_refusals():
    handle = parse_extra_info("5 1764350000000 60000 0 0 broker-a 3 7")
    assert (handle.ck_offset, handle.pop_time, handle.invisible_time, handle.queue_id, handle.queue_offset) == (
        5,
        1764350000000,
        60000,
        3,
        7,
    )
    assert handle.text() == "5 1764350000000 60000 0 0 broker-a 3 7" and not handle.order
    assert parse_extra_info("5 1 2 999 0 b 3").order and parse_extra_info("5 1 2 999 0 b 3").queue_offset is None
    with pytest.raises(ExtraInfoError, match="popTime"):
        parse_extra_info("5 x 60000 0 0 broker-a 3 7")
    with pytest.raises(ExtraInfoError, match="3 fields"):
        parse_extra_info("1 2 3")


@pytest.mark.parametrize(
    "born, store, flag",
    [
        ("127.0.0.1:1", "127.0.0.1:2", 0),
        ("[::1]:1", "127.0.0.1:2", 0x10),
        ("127.0.0.1:1", "[::1]:2", 0x20),
        ("[::1]:1", "[::1]:2", 0x30),
    ],
)
def test_reconsume_times_rewritten_whatever_the_hosts(born, store, flag):
    record = encode_record(
        topic="T",
        queue_id=1,
        body=b"x",
        queue_offset=7,
        physical_offset=99,
        sys_flag=flag,
        born_host=born,
        store_host=store,
        reconsume_times=0,
    )
    assert record_offsets(record) == (7, 99)
    (msg,) = decode_records(with_reconsume_times(record, 4))
    assert (msg.reconsume_times, msg.body, msg.queue_offset, msg.born_host, msg.store_host) == (4, b"x", 7, born, store)


def test_expired_deliveries_are_found_without_a_pass_over_every_one_in_flight():
    from brokers.engine.broker.pop.state import PopState

    state = PopState()
    key = {"g": "G", "t": "T", "q": 0}
    # 10,000 deliveries taken at t=0 for 30 s, then two more at t=5 s for 1 s
    state.apply(
        {"op": "pop", **key, "cur": 10_000, "pt": 0, "it": 30_000, "ck": 0, "m": [[o, 0, o] for o in range(10_000)]}
    )
    qs = state.apply(
        {
            "op": "pop",
            **key,
            "cur": 10_002,
            "pt": 5_000,
            "it": 1_000,
            "ck": 10_000,
            "m": [[10_000, 0, 1], [10_001, 3, 2]],
        }
    )
    everyone = lambda f: True  # noqa: E731
    assert qs.due(5_999, 32, everyone) == []
    assert [f.offset for f in qs.due(6_000, 32, everyone)] == [10_000, 10_001]
    # what the caller does not take stays due; a delivery the caller refuses is returned but not counted
    few_retries = lambda f: f.reconsume < 3  # noqa: E731
    assert [f.offset for f in qs.due(6_000, 1, few_retries)] == [10_000]
    state.apply({"op": "ack", **key, "o": 10_000, "pt": 5_000})
    state.apply({"op": "chg", **key, "o": 10_001, "pt": 5_000, "npt": 6_000, "it": 60_000})
    assert qs.due(6_000, 32, everyone) == []  # acked, and made invisible again
    # at 30 s, the first batch: the earliest deadline first, a batch by offset, at most the limit
    assert [f.offset for f in qs.due(30_000, 32, everyone)] == list(range(32))
    assert len(qs.deadlines) <= 2 * len(qs.inflight) + 64 + 3

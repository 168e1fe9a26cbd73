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

"""The HA parts one at a time: framing, the wait list, the replica appender on real stores (a
stream cut at every byte still gives a byte-identical log), suggestWhichBrokerId, the slave's
offset rules, the consumer-offset merge, and the role/id settings."""

from __future__ import annotations

import asyncio

import pytest

from brokers.engine.broker.config import BrokerConfig, BrokerConfigError
from brokers.engine.broker.pull_suggestion import slave_pull_answer, suggest_which_broker_id
from brokers.engine.broker.slave_synchronize import merge_consumer_offsets
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.default_message_store import DefaultMessageStore
from brokers.engine.store.ha import ha_protocol as hp
from brokers.engine.store.ha.group_transfer import GroupTransfer
from brokers.engine.store.ha.ha_message_store import suggest_pulling_from_slave
from brokers.engine.store.ha.replica_appender import ReplicaStreamError
from brokers.engine.store.ha.silence import SilenceWatch
from brokers.engine.store.message_inner import MessageExtBrokerInner
from brokers.engine.store.results import GetMessageStatus


def _store(path, **kw) -> DefaultMessageStore:
    return DefaultMessageStore(
        StoreConfig(
            str(path),
            commitlog_file_size=4096,
            consume_queue_units_per_file=100,
            max_index_hash_slots=100,
            max_index_count=400,
            **kw,
        )
    )


def _msg(i: int) -> MessageExtBrokerInner:
    return MessageExtBrokerInner(
        topic="T",
        queue_id=i % 2,
        body=b"x" * (10 + 37 * (i % 9)),
        properties={"TAGS": f"t{i % 3}", "KEYS": f"k{i}"},
        born_host="127.0.0.1:1",
    )


def test_framing_round_trips_and_rejects_garbage():
    assert hp.decode_hello(hp.encode_hello(123, epoch=4)) == hp.Hello(hp.HA_VERSION, 4, 123)
    with pytest.raises(hp.HAProtocolError):
        hp.decode_hello(b"XXXX" + hp.encode_hello(1)[4:])
    with pytest.raises(hp.HAProtocolError):
        hp.decode_hello(hp.encode_hello(1)[:8] + b"\xff" * 16)  # negative epoch and offset
    welcome = hp.encode_welcome(hp.STATUS_NOT_MASTER, max_offset=9, file_size=4096, broker_addr="h:1")
    head, n = hp.decode_welcome_head(welcome[: hp.WELCOME.size])
    assert head.status_name == "NOT_MASTER" and welcome[hp.WELCOME.size :] == b"h:1" and n == 3
    assert hp.decode_frame_header(hp.encode_frame_header(8, 4, 12, 7, 3, 9), 32) == (8, 4, 12, 7, 3, 9)
    for bad in ((8, 40, 100, 0), (-1, 0, 0, 0), (8, 4, 10, 0)):  # past the limit, negative, past the master's end
        with pytest.raises(hp.HAProtocolError):
            hp.decode_frame_header(hp.encode_frame_header(*bad), 32)


def test_group_transfer_resolves_waiters_in_one_pass_and_times_out():
    async def scenario():
        gt = GroupTransfer()
        waits = [asyncio.ensure_future(gt.wait(off, 5)) for off in (10, 20, 30)]
        late = asyncio.ensure_future(gt.wait(1000, 0.05))
        await asyncio.sleep(0)
        gt.ack(25)
        assert await waits[0] and await waits[1] and not waits[2].done()
        gt.ack(30)
        assert await waits[2]
        assert await late is False and gt.requests_timed_out == 1
        assert await gt.wait(5, 0.01)  # already acknowledged

    asyncio.run(scenario())


def test_replica_appender_builds_an_identical_log_from_a_stream_cut_anywhere(tmp_path):
    master = _store(tmp_path / "m")
    master.open()
    for i in range(120):  # crosses several 4 KiB segments: blank markers replicate too
        assert master.put_message_sync(_msg(i)).ok
    end = master.max_phy_offset
    stream = b"".join(master.commitlog.read(off, min(4096, end - off)) for off in range(0, end, 4096))
    slave = _store(tmp_path / "s")
    slave.open()
    appender = slave.replica_appender(1 << 16)
    arrivals = []
    slave.add_arrival_listener(lambda *a: arrivals.append(a))
    pos = 0
    for i, cut in enumerate([1, 7, 91, 500, 4000, 13, 3000] * 100):  # frames end mid-record
        seg_end = pos - pos % 4096 + 4096
        size = min(cut, end - pos, seg_end - pos)
        if size <= 0:
            break
        appender.append(pos, stream[pos : pos + size])
        pos += size
        assert slave.max_phy_offset <= pos
    assert pos == end and slave.max_phy_offset == end and len(arrivals) == 120
    for q in (0, 1):
        mine = master.get_message("g", "T", q, 0, 100)
        theirs = slave.get_message("g", "T", q, 0, 100)
        assert mine.records == theirs.records and len(mine.records) == 60
    assert slave.query_message("T", "k7", 10, 0, 1 << 62) == master.query_message("T", "k7", 10, 0, 1 << 62)
    with pytest.raises(ReplicaStreamError):
        appender.append(end + 8, b"\x00" * 8)  # not where the log ends
    before = slave.max_phy_offset
    with pytest.raises(ReplicaStreamError):
        appender.append(end, b"\x00\x00\x01\x00" + b"\xde\xad\xbe\xef" * 20)  # not a record
    assert slave.max_phy_offset == before
    master.close()
    slave.close()
    for name in sorted((tmp_path / "m" / "commitlog").iterdir()):
        assert name.read_bytes() == (tmp_path / "s" / "commitlog" / name.name).read_bytes()


def test_replica_appender_takes_frames_in_place_from_a_read_buffer(tmp_path):
    """As the HA client hands them: a frame's body as (buffer, start, stop) of the bytes read,
    most ending on a record (written straight from the buffer), some mid-record (kept pending)."""
    master = _store(tmp_path / "m")
    master.open()
    for i in range(60):
        assert master.put_message_sync(_msg(i)).ok
    end = master.max_phy_offset
    stream = b"".join(master.commitlog.read(off, min(4096, end - off)) for off in range(0, end, 4096))
    bounds, pos = [0], 0
    while pos < end:  # record starts, and the segment ends where blank markers are
        size = int.from_bytes(stream[pos : pos + 4], "big")
        pos += size
        bounds.append(pos)
    slave = _store(tmp_path / "s")
    slave.open()
    appender = slave.replica_appender(1 << 16)
    cuts = sorted(set(bounds[::3]) | {bounds[10] + 5, bounds[20] + 200, end})
    at = 0
    for cut in cuts:
        if cut <= at:
            continue
        read = b"HEADER" + stream[at:cut] + b"NEXT"  # the frame in the middle of what one read returned
        appender.write(at, read, 6, 6 + cut - at)
        appender.dispatch()
        at = cut
    assert slave.max_phy_offset == end and appender.pending_bytes == 0
    for q in (0, 1):
        assert slave.get_message("g", "T", q, 0, 100).records == master.get_message("g", "T", q, 0, 100).records
    master.close()
    slave.close()
    for name in sorted((tmp_path / "m" / "commitlog").iterdir()):
        assert name.read_bytes() == (tmp_path / "s" / "commitlog" / name.name).read_bytes()


def test_silence_watch_drops_a_silent_peer_and_keeps_a_talking_one():
    async def scenario():
        async def serve(reader, writer):
            if (await reader.readexactly(1)) == b"t":  # "talk": a byte every 50 ms for 0.6 s
                for _ in range(12):
                    writer.write(b".")
                    await asyncio.sleep(0.05)
            await asyncio.sleep(1.5)  # then silence
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        results = {}
        for mode in (b"s", b"t"):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(mode)
            loop = asyncio.get_running_loop()
            start, heard = loop.time(), 0
            with SilenceWatch(writer.transport, 0.4) as watch:
                while True:
                    data = await reader.read(100)
                    if watch.expired or not data:
                        break
                    watch.heard()
                    heard += len(data)
            results[mode] = (watch.expired, heard, loop.time() - start)
            writer.close()
        server.close()
        return results

    results = asyncio.run(scenario())
    expired, heard, took = results[b"s"]
    assert expired and heard == 0 and 0.4 <= took < 5  # dropped once silent for the limit, not before
    expired, heard, took = results[b"t"]  # 0.6 s of bytes 50 ms apart, then dropped 0.4 s into the silence
    assert expired and heard == 12 and 0.95 <= took < 5


def test_suggest_which_broker_id_follows_rocketmq():
    kw = dict(which_broker_when_consume_slowly=1, group_broker_id=0)
    assert suggest_which_broker_id(slave_read_enable=True, suggest_pulling_from_slave=True, **kw) == 1
    assert suggest_which_broker_id(slave_read_enable=True, suggest_pulling_from_slave=False, **kw) == 0
    assert suggest_which_broker_id(slave_read_enable=False, suggest_pulling_from_slave=True, **kw) == 0
    assert suggest_pulling_from_slave(10_000, 1_000, memory=10_000, ratio_percent=40)
    assert not suggest_pulling_from_slave(10_000, 7_000, memory=10_000, ratio_percent=40)


def test_slave_keeps_the_requested_offset_instead_of_correcting_it():
    moved = slave_pull_answer(ResponseCode.PULL_OFFSET_MOVED, GetMessageStatus.OFFSET_OVERFLOW_BADLY, 50, 30, 1, 0)
    assert moved == (ResponseCode.PULL_RETRY_IMMEDIATELY, 50, 0)
    assert slave_pull_answer(ResponseCode.SUCCESS, GetMessageStatus.FOUND, 5, 9, 1, 0) == (ResponseCode.SUCCESS, 9, 1)
    assert slave_pull_answer(ResponseCode.PULL_NOT_FOUND, GetMessageStatus.OFFSET_OVERFLOW_ONE, 7, 7, 0, 0)[1] == 7


def test_consumer_offset_merge_never_moves_a_slave_commit_backwards():
    local = {"T@g": {0: 10, 1: 5}}
    merged, synced = merge_consumer_offsets(local, {"T@g": {0: 10, 1: 5}, "U@g": {0: 3}}, {})
    assert merged == {"T@g": {0: 10, 1: 5}, "U@g": {0: 3}}
    merged["T@g"][0] = 40  # a consumer committed on the slave while the master was away
    merged2, synced2 = merge_consumer_offsets(merged, {"T@g": {0: 12, 1: 2}, "U@g": {0: 3}}, synced)
    assert merged2["T@g"] == {0: 40, 1: 2}  # kept the slave's commit; followed the master's reset
    merged3, _ = merge_consumer_offsets(merged2, {"T@g": {0: 45, 1: 2}, "U@g": {0: 3}}, synced2)
    assert merged3["T@g"][0] == 45


def test_role_and_id_combinations_are_checked_at_start(tmp_path):
    store = StoreConfig(str(tmp_path))
    with pytest.raises(BrokerConfigError, match="broker_id must be >= 1 for broker_role SLAVE"):
        BrokerConfig(broker_name="b", store=store, broker_role="SLAVE")
    with pytest.raises(BrokerConfigError, match="broker_id must be 0 for broker_role SYNC_MASTER"):
        BrokerConfig(broker_name="b", store=store, broker_role="SYNC_MASTER", broker_id=1)
    with pytest.raises(BrokerConfigError, match="broker_role"):
        BrokerConfig(broker_name="b", store=store, broker_role="MASTER")
    assert BrokerConfig(broker_name="b", store=store, listen_port=10911).effective_ha_listen_port == 10912
    assert BrokerConfig(broker_name="b", store=store, listen_port=0).effective_ha_listen_port == 0

"""The group epoch file (format, atomic 0600 writes, refusals of malformed files), the common
point two histories share, the v2 welcome's history framing, a divergent tail cut from a real
store, the promotion plan's refusals, and the name server's epoch rule."""

from __future__ import annotations

import os
import stat

import pytest

from brokers.engine.broker.promotion_plan import plan_promotion
from brokers.engine.namesrv.route_info import RouteInfoManager
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.default_message_store import DefaultMessageStore
from brokers.engine.store.ha import ha_protocol as hp
from brokers.engine.store.ha.epoch_file import EpochEntry, EpochFile, EpochFileError, common_point
from brokers.engine.store.message_inner import MessageExtBrokerInner

E = EpochEntry


def test_epoch_file_is_written_atomically_0600_in_the_documented_format(tmp_path):
    f = EpochFile(str(tmp_path))
    assert f.load() == (E(0, 0),) and f.epoch == 0 and not os.path.exists(f.path)
    f.begin(1, 5000)
    f.begin(2, 9000)
    assert open(f.path).read() == "gantry-epochs 1\n0 0\n1 5000\n2 9000\n"
    assert stat.S_IMODE(os.stat(f.path).st_mode) == 0o600
    assert not os.path.exists(f.path + ".tmp")
    again = EpochFile(str(tmp_path))
    assert again.load() == (E(0, 0), E(1, 5000), E(2, 9000)) and again.epoch == 2
    again.begin(3, 7000)  # a promotion at 7000 drops the epoch that began past it
    assert again.entries == (E(0, 0), E(1, 5000), E(3, 7000))
    with pytest.raises(EpochFileError):
        again.begin(3, 8000)  # epochs strictly increase


@pytest.mark.parametrize(
    "text",
    [
        "",
        "gantry-epochs 2\n0 0\n",
        "gantry-epochs 1\n0 x\n",
        "gantry-epochs 1\n2 0\n1 5\n",
        "gantry-epochs 1\n0 10\n1 5\n",
        "gantry-epochs 1\n",
    ],
)
def test_a_malformed_epoch_file_is_refused_with_its_path(tmp_path, text):
    (tmp_path / "epoch").write_text(text)
    with pytest.raises(EpochFileError, match="epoch"):
        EpochFile(str(tmp_path)).load()


def test_common_point_is_the_start_of_the_first_epoch_not_shared():
    old_master = (E(0, 0),)
    new_master = (E(0, 0), E(1, 800))
    # the old master wrote epoch 0 up to 1000; the promoted slave had 800 of it
    assert common_point(old_master, 1000, new_master, 5000) == 800
    assert common_point(old_master, 700, new_master, 5000) == 700  # nothing to cut
    # two promotions later, a broker that saw epoch 1 but then took writes of its own epoch 2
    mine = (E(0, 0), E(1, 800), E(2, 3000))
    theirs = (E(0, 0), E(1, 800), E(3, 2500))
    assert common_point(mine, 4000, theirs, 9000) == 2500
    assert common_point((E(5, 0),), 100, new_master, 5000) == 0  # nothing shared


def test_welcome_carries_the_history_and_rejects_a_disordered_one():
    data = hp.encode_welcome(
        hp.STATUS_OK, max_offset=10, epoch=2, acked=7, role="SYNC_MASTER", broker_addr="h:1", history=((0, 0), (2, 5))
    )
    head, n = hp.decode_welcome_head(data[: hp.WELCOME.size])
    assert (head.epoch, head.acked, head.role, head.n_epochs, n) == (2, 7, "SYNC_MASTER", 2, 3)
    rest = data[hp.WELCOME.size + n :]
    assert hp.decode_history(rest, 2) == ((0, 0), (2, 5))
    with pytest.raises(hp.HAProtocolError):
        hp.decode_history(hp.EPOCH_ENTRY.pack(3, 0) + hp.EPOCH_ENTRY.pack(1, 9), 2)


def _msg(i: int) -> MessageExtBrokerInner:
    return MessageExtBrokerInner(
        topic="T",
        queue_id=i % 2,
        body=b"x" * (10 + 37 * (i % 9)),
        properties={"TAGS": f"t{i % 3}", "KEYS": f"k{i}"},
        born_host="127.0.0.1:1",
    )


def test_truncate_to_cuts_log_queues_and_index_and_survives_a_reopen(tmp_path):
    cfg = StoreConfig(
        str(tmp_path / "s"),
        commitlog_file_size=4096,
        consume_queue_units_per_file=100,
        max_index_hash_slots=100,
        max_index_count=400,
    )
    store = DefaultMessageStore(cfg)
    store.open()
    ends = [store.put_message_sync(_msg(i)).wrote_offset for i in range(60)]
    point = ends[40]  # the start of record 40
    report = store.truncate_to(point)
    assert (report.from_offset, report.to_offset, report.queue_units_removed) == (
        report.from_offset,
        point,
        20,
    ) and report.bytes_removed == report.from_offset - point
    assert store.max_phy_offset == point
    assert store.get_max_offset_in_queue("T", 0) + store.get_max_offset_in_queue("T", 1) == 40
    assert store.query_message("T", "k45", 10, 0, 2**62) == []
    assert store.put_message_sync(_msg(99)).wrote_offset == point  # appends go on from the cut
    store.close()
    store = DefaultMessageStore(cfg)
    store.open()
    assert store.get_max_offset_in_queue("T", 0) + store.get_max_offset_in_queue("T", 1) == 41
    store.close()


def _plan(**kw):
    args = dict(
        broker_name="broker-a",
        broker_id=1,
        from_role="SLAVE",
        requested_role="",
        group_role="SYNC_MASTER",
        epoch=0,
        highest_known_epoch=0,
        max_phy_offset=5000,
        master_max_offset=6234,
        acked_offset=6234,
        master_reachable=False,
        master_addr="127.0.0.1:10911",
        force=False,
        dry_run=True,
    )
    args.update(kw)
    return plan_promotion(**args)


def test_promotion_plan_refusals_and_force():
    plan = _plan()
    assert plan.refused.startswith(
        "promotion of broker-a id 1 refused: it lacks 1,234 acknowledged bytes "
        "(commit-log offsets 5000..6234) of its SYNC_MASTER group"
    )
    assert (plan.to_role, plan.new_epoch, plan.missing_acked_bytes) == ("SYNC_MASTER", 1, 1234)
    assert _plan(force=True).refused == ""
    assert _plan(acked_offset=5000).refused == ""  # the unacknowledged tail may go in a SYNC group
    assert "lacks 1,234 bytes" in _plan(group_role="ASYNC_MASTER", acked_offset=0).refused
    assert _plan(master_reachable=True, acked_offset=0).refused == (
        "the master of broker-a (127.0.0.1:10911) is alive; stop it first or pass force"
    )
    assert _plan(highest_known_epoch=4, epoch=2, requested_role="ASYNC_MASTER").to_json()["newEpoch"] == 5


def test_name_server_refuses_a_stale_master_and_a_higher_epoch_replaces_it():
    r = RouteInfoManager()
    wrapper = {"topicConfigTable": {}, "dataVersion": {"timestamp": 1, "counter": 1}}
    assert not r.register_broker("C", "m:1", "broker-a", 0, "m:2", wrapper, "k1", 0.0).refused
    assert not r.register_broker("C", "s:1", "broker-a", 1, "s:2", wrapper, "k2", 0.0).refused
    promoted = r.register_broker("C", "s:1", "broker-a", 0, "s:2", wrapper, "k2", 1.0, epoch=1)
    assert not promoted.refused and promoted.epoch == 1
    assert r.broker_addr_table["broker-a"].broker_addrs == {0: "s:1"}
    stale = r.register_broker("C", "m:1", "broker-a", 0, "m:2", wrapper, "k3", 2.0)  # a 4.x-style epoch 0
    assert stale.refused == "stale epoch 0 < 1; the master of broker-a is now s:1"
    assert (stale.master_addr, stale.ha_server_addr, stale.epoch, stale.next_slave_id) == ("s:1", "s:2", 1, 1)
    assert r.broker_addr_table["broker-a"].broker_addrs == {0: "s:1"}  # no route changed
    assert not r.register_broker("C", "m:1", "broker-a", 1, "m:2", wrapper, "k3", 2.0).refused  # as a slave: fine
    other = r.register_broker("C", "x:1", "broker-a", 0, "x:2", wrapper, "k4", 2.0, epoch=1)
    assert "held by its master s:1" in other.refused  # the same epoch cannot take over a live master
    # RocketMQ 4.x brokers (no epoch) keep re-registering as before
    for _ in range(2):
        assert not r.register_broker("C", "b:1", "broker-b", 0, "", wrapper, "k5", 3.0).refused

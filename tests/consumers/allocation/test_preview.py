"""Whole-group preview and side-by-side comparison."""

from __future__ import annotations

import dataclasses

from brokers.engine.common.perm import PERM_WRITE
from brokers.engine.client.allocation import MessageQueue, get_strategy, strategy_names
from consumers.allocation import BrokerQueues, QueueLayout, compare_strategies, preview_allocation
from tests.brokers.engine.client.allocation._support import SEED_CIDS, DashResolver, seed_queues, short

SEED_LAYOUT = QueueLayout.hypothetical("topic_demo", {"broker_c": 3, "broker_a": 3, "broker_b": 3})


def test_seed_preview_under_avg() -> None:
    preview = preview_allocation(queues=SEED_LAYOUT, cids=reversed(SEED_CIDS), strategy=get_strategy("AVG"))
    assert preview.strategy_name == "AVG"
    assert preview.queues == tuple(seed_queues())
    assert preview.cids == SEED_CIDS
    assert {c: short(q) for c, q in preview.assignment.items()} == {
        SEED_CIDS[0]: ["a0", "a1", "a2"],
        SEED_CIDS[1]: ["b0", "b1"],
        SEED_CIDS[2]: ["b2", "c0"],
        SEED_CIDS[3]: ["c1", "c2"],
    }
    assert preview.queue_to_cid[MessageQueue("topic_demo", "broker_b", 2)] == SEED_CIDS[2]
    assert preview.queue_counts == dict(zip(SEED_CIDS, [3, 2, 2, 2]))
    assert preview.balance == 1
    assert preview.idle_consumers == ()
    assert preview.unassigned_queues == ()
    assert preview.every_queue_owned_once


def test_more_consumers_than_queues_shows_idle_consumers() -> None:
    layout = QueueLayout.hypothetical("T", {"broker-a": 2})
    preview = preview_allocation(queues=layout, cids=["c1", "c2", "c3"], strategy=get_strategy("AVG"))
    assert preview.idle_consumers == ("c3",)
    assert preview.balance == 1


def test_unreadable_broker_contributes_nothing() -> None:
    layout = QueueLayout("T", (BrokerQueues("a", 2), BrokerQueues("b", 8, PERM_WRITE)))
    preview = preview_allocation(queues=layout, cids=["c1"], strategy=get_strategy("AVG"))
    assert [mq.broker_name for mq in preview.assignment["c1"]] == ["a", "a"]


def test_config_shows_shared_unassigned_and_foreign_queues() -> None:
    mqs = seed_queues()
    foreign = MessageQueue("topic_demo", "gone", 0)
    strategy = get_strategy("CONFIG", message_queue_list=[mqs[0], foreign])
    preview = preview_allocation(queues=mqs, cids=["c1", "c2"], strategy=strategy)
    assert [(row.queue, row.cids) for row in preview.shared_queues] == [
        (mqs[0], ("c1", "c2")),
        (foreign, ("c1", "c2")),
    ]
    assert preview.queue_owners[1].cids == () and preview.queue_owners[1].cid is None
    assert preview.unassigned_queues == tuple(mqs[1:])
    assert preview.foreign_queues == (foreign,)
    assert not preview.every_queue_owned_once


def test_consistent_hash_can_leave_a_consumer_idle() -> None:
    preview = preview_allocation(
        queues=seed_queues("T"), cids=["cid0", "cid1", "cid2", "cid3"], strategy=get_strategy("CONSISTENT_HASH")
    )
    assert preview.idle_consumers == ("cid0",)
    assert preview.balance == 4


def test_empty_inputs_do_not_call_the_strategy() -> None:
    no_queues = preview_allocation(queues=[], cids=["c1"], strategy=get_strategy("AVG"))
    assert no_queues.assignment == {"c1": ()} and no_queues.idle_consumers == ("c1",)
    nobody = preview_allocation(queues=seed_queues(), cids=[], strategy=get_strategy("AVG"))
    assert nobody.assignment == {} and nobody.balance == 0
    assert nobody.unassigned_queues == tuple(seed_queues())


def test_preview_is_a_frozen_dataclass_asdict_works() -> None:
    preview = preview_allocation(queues=SEED_LAYOUT, cids=SEED_CIDS, strategy=get_strategy("AVG"))
    assert dataclasses.is_dataclass(preview)
    as_dict = dataclasses.asdict(preview)
    assert as_dict["balance"] == 1
    assert as_dict["queue_owners"][0] == {
        "queue": {"topic": "topic_demo", "broker_name": "broker_a", "queue_id": 0},
        "cids": (SEED_CIDS[0],),
    }


def test_compare_every_strategy_side_by_side() -> None:
    comparison = compare_strategies(
        queues=SEED_LAYOUT,
        cids=SEED_CIDS,
        params={"CONSISTENT_HASH": {"virtual_node_cnt": 10}},
    )
    assert [e.name for e in comparison.entries] == list(strategy_names())
    assert comparison.entry("AVG").preview.queue_counts == dict(zip(SEED_CIDS, [3, 2, 2, 2]))
    assert comparison.entry("AVG_BY_CIRCLE").preview.balance == 1
    assert comparison.entry("CONSISTENT_HASH").preview.queue_counts == dict(zip(SEED_CIDS, [3, 4, 1, 1]))
    for name, parameter in (
        ("CONFIG", "message_queue_list"),
        ("MACHINE_ROOM", "consumeridcs"),
        ("MACHINE_ROOM_NEARBY", "resolver"),
    ):
        entry = comparison.entry(name)
        assert entry.preview is None and parameter in entry.skipped_reason


def test_compare_with_parameters_and_a_failing_resolver() -> None:
    class NoRoom:
        def broker_deploy_in(self, mq):
            return ""

        def consumer_deploy_in(self, cid):
            return "x"

    comparison = compare_strategies(
        queues=SEED_LAYOUT,
        cids=SEED_CIDS,
        names=["CONFIG", "MACHINE_ROOM", "MACHINE_ROOM_NEARBY"],
        params={
            "CONFIG": {"message_queue_list": seed_queues()[:1]},
            "MACHINE_ROOM": {"consumeridcs": {"hz"}},
            "MACHINE_ROOM_NEARBY": {"inner": "AVG", "resolver": NoRoom()},
        },
    )
    assert comparison.entry("CONFIG").preview.shared_queues
    assert len(comparison.entry("MACHINE_ROOM").preview.unassigned_queues) == 9  # no room@ names
    assert "Machine room is null" in comparison.entry("MACHINE_ROOM_NEARBY").skipped_reason


def test_nearby_preview_with_resolver() -> None:
    layout = QueueLayout.hypothetical("T", {"hz-broker-a": 3, "hz-broker-b": 3, "gz-broker-c": 3})
    preview = preview_allocation(
        queues=layout,
        cids=["hz-c0", "hz-c1", "sh-c2", "sh-c3"],
        strategy=get_strategy("MACHINE_ROOM_NEARBY", inner="AVG", resolver=DashResolver()),
    )
    assert preview.strategy_name == "MACHINE_ROOM_NEARBY-AVG"
    assert preview.queue_counts == {"hz-c0": 4, "hz-c1": 4, "sh-c2": 1, "sh-c3": 0}
    assert preview.idle_consumers == ("sh-c3",)

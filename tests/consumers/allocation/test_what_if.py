"""What-if scenarios and the movement diff (checked against a brute-force recount)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokers.engine.client.allocation import AllocationError, MessageQueue, get_strategy
from consumers.allocation import QueueLayout, Scenario, movement_diff, what_if

LAYOUT = QueueLayout.hypothetical("T", {"broker-a": 4, "broker-b": 4})
CIDS = ["c1", "c2"]


def q(broker: str, i: int) -> MessageQueue:
    return MessageQueue("T", f"broker-{broker}", i)


def test_adding_a_consumer_under_avg() -> None:
    result = what_if(layout=LAYOUT, cids=CIDS, strategy=get_strategy("AVG"), scenario=Scenario(add_consumers=("c3",)))
    # before: c1 a0-a3, c2 b0-b3; after: c1 a0 a1 a2, c2 a3 b0 b1, c3 b2 b3
    assert result.after.queue_counts == {"c1": 3, "c2": 3, "c3": 2}
    assert result.diff.queues_moved == 3
    assert result.diff.gains == {"c2": (q("a", 3),), "c3": (q("b", 2), q("b", 3))}
    assert result.diff.losses == {"c1": (q("a", 3),), "c2": (q("b", 2), q("b", 3))}
    assert result.added_queues == result.removed_queues == ()


def test_consistent_hash_moves_only_the_new_consumers_queues() -> None:
    layout = QueueLayout.hypothetical("T", {"broker-a": 16, "broker-b": 16})
    result = what_if(
        layout=layout,
        cids=[f"c{i}" for i in range(6)],
        strategy=get_strategy("CONSISTENT_HASH"),
        scenario=Scenario(add_consumers=("c-new",)),
    )
    assert set(result.diff.gains) <= {"c-new"}
    assert result.diff.queues_moved == len(result.after.assignment["c-new"])


def test_broker_down_releases_its_queues() -> None:
    result = what_if(
        layout=LAYOUT, cids=CIDS, strategy=get_strategy("AVG"), scenario=Scenario(brokers_down=("broker-a",))
    )
    assert result.removed_queues == tuple(q("a", i) for i in range(4))
    assert result.diff.queues_released == 4
    assert result.after.queue_counts == {"c1": 2, "c2": 2}
    assert result.diff.queues_moved == 2  # b0, b1 go from c2 to c1


def test_queue_count_change_picks_up_new_queues() -> None:
    result = what_if(
        layout=LAYOUT,
        cids=CIDS,
        strategy=get_strategy("AVG_BY_CIRCLE"),
        scenario=Scenario(queue_counts={"broker-b": 6, "broker-c": 2}),
    )
    assert result.added_queues == (q("b", 4), q("b", 5), q("c", 0), q("c", 1))
    assert result.diff.queues_picked_up == 4


def test_removing_all_consumers_releases_everything() -> None:
    result = what_if(
        layout=LAYOUT, cids=CIDS, strategy=get_strategy("AVG"), scenario=Scenario(remove_consumers=("c1", "c2"))
    )
    assert result.after.assignment == {}
    assert result.diff.queues_released == 8


def test_diff_against_the_observed_current_assignment() -> None:
    current = {"c1": [q("a", i) for i in range(4)] + [q("b", i) for i in range(4)], "c2": []}
    result = what_if(layout=LAYOUT, cids=CIDS, strategy=get_strategy("AVG"), scenario=Scenario(), current=current)
    assert result.diff.losses == {"c1": tuple(q("b", i) for i in range(4))}


def test_strategy_switch() -> None:
    result = what_if(
        layout=LAYOUT,
        cids=CIDS,
        strategy=get_strategy("AVG"),
        scenario=Scenario(),
        after_strategy=get_strategy("AVG_BY_CIRCLE"),
    )
    assert result.after.strategy_name == "AVG_BY_CIRCLE"
    assert result.diff.queues_moved == 4


@pytest.mark.parametrize(
    "scenario",
    [
        Scenario(remove_consumers=("nobody",)),
        Scenario(add_consumers=("c1",)),
        Scenario(add_consumers=("",)),
        Scenario(brokers_down=("broker-z",)),
        Scenario(brokers_down=("broker-a",), queue_counts={"broker-a": 2}),
    ],
)
def test_invalid_scenarios_raise(scenario: Scenario) -> None:
    with pytest.raises(AllocationError):
        what_if(layout=LAYOUT, cids=CIDS, strategy=get_strategy("AVG"), scenario=scenario)


def test_scenario_rejects_a_bare_string() -> None:
    with pytest.raises(AllocationError):
        Scenario(add_consumers="c3")  # type: ignore[arg-type]


QUEUES = [MessageQueue("T", b, i) for b in ("a", "b") for i in range(5)]
assignments = st.dictionaries(
    st.sampled_from(["c1", "c2", "c3", "c4"]),
    st.lists(st.sampled_from(QUEUES), max_size=6),
    max_size=4,
)


@settings(max_examples=150, deadline=None)
@given(before=assignments, after=assignments)
def test_movement_diff_matches_a_brute_force_recount(before, after) -> None:
    diff = movement_diff(before, after)

    def holders(assignment, mq):
        return {cid for cid, queues in assignment.items() if mq in queues}

    moved = released = picked = 0
    changed = []
    for mq in QUEUES:
        old, new = holders(before, mq), holders(after, mq)
        if old != new:
            changed.append(mq)
            moved += bool(old and new)
            released += bool(old and not new)
            picked += bool(new and not old)
    assert [m.queue for m in diff.moves] == changed
    assert (diff.queues_moved, diff.queues_released, diff.queues_picked_up) == (moved, released, picked)
    for cid in {"c1", "c2", "c3", "c4"}:
        gained = set(after.get(cid, ())) - set(before.get(cid, ()))
        lost = set(before.get(cid, ())) - set(after.get(cid, ()))
        assert set(diff.gains.get(cid, ())) == gained
        assert set(diff.losses.get(cid, ())) == lost
        assert (cid in diff.gains) == bool(gained) and (cid in diff.losses) == bool(lost)
    assert diff.changed == bool(changed)

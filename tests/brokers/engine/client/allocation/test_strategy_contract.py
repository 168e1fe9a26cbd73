"""Behaviour every strategy shares, one suite parametrized over all of them.

RocketMQ semantics checked here: the argument check (empty current cid / queue list / client
list raise, a foreign client gets nothing), no sorting inside a strategy, no mutation of the
inputs, determinism, and ``allocate_all`` equal to one ``allocate`` call per client. The
strategies are the ones the engine's consumers run: the suite also takes the strategy a
``PushConsumer`` and a ``PullConsumer`` given none hold (``AVG@...``).
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokers.engine.client import PullConsumer, PushConsumer
from brokers.engine.client.allocation import (
    AllocateMessageQueueAveragely,
    AllocationError,
    MessageQueue,
    allocate_all,
    get_strategy,
)
from brokers.engine.client.allocation.strategy import group_allocate, sort_for_rebalance
from tests.brokers.engine.client.allocation._support import DashResolver, owners, per_cid

CONFIGURED = [MessageQueue("T", "hz-broker-a", 0), MessageQueue("T", "elsewhere", 7)]

BUILDERS = {
    "AVG": lambda: get_strategy("AVG"),
    "AVG_BY_CIRCLE": lambda: get_strategy("AVG_BY_CIRCLE"),
    "CONFIG": lambda: get_strategy("CONFIG", message_queue_list=CONFIGURED),
    "MACHINE_ROOM": lambda: get_strategy("MACHINE_ROOM", consumeridcs={"hz", "gz"}),
    "MACHINE_ROOM_NEARBY-AVG": lambda: get_strategy("MACHINE_ROOM_NEARBY", inner="AVG", resolver=DashResolver()),
    "MACHINE_ROOM_NEARBY-CONSISTENT_HASH": lambda: get_strategy(
        "MACHINE_ROOM_NEARBY",
        inner=get_strategy("CONSISTENT_HASH", virtual_node_cnt=3),
        resolver=DashResolver(),
    ),
    "CONSISTENT_HASH": lambda: get_strategy("CONSISTENT_HASH"),
    "CONSISTENT_HASH-v0": lambda: get_strategy("CONSISTENT_HASH", virtual_node_cnt=0),
    "CONSISTENT_HASH-v1": lambda: get_strategy("CONSISTENT_HASH", virtual_node_cnt=1),
    # what a consumer constructed without a strategy runs (no I/O before start())
    "AVG@PushConsumer": lambda: PushConsumer("contract_group").strategy,
    "AVG@PullConsumer": lambda: PullConsumer("contract_group").strategy,
}
ALL = sorted(BUILDERS)
CHECKED = [k for k in ALL if k != "CONFIG"]  # CONFIG runs no argument check in Java either
# Strategies that give every queue exactly one owner whenever there is a queue and a client.
PARTITIONING = [
    "AVG",
    "AVG@PullConsumer",
    "AVG@PushConsumer",
    "AVG_BY_CIRCLE",
    "CONSISTENT_HASH",
    "CONSISTENT_HASH-v1",
    "MACHINE_ROOM_NEARBY-AVG",
    "MACHINE_ROOM_NEARBY-CONSISTENT_HASH",
]

BROKERS = ["hz-broker-a", "hz@broker-b", "sh-broker-c", "gz@broker-d", "broker-e", "hz@broker@f"]
ROOMS = ["hz", "sh", "bj", "gz"]

queue_lists = st.lists(
    st.tuples(st.sampled_from(["T", "T2"]), st.sampled_from(BROKERS), st.integers(0, 7)).map(
        lambda t: MessageQueue(*t)
    ),
    max_size=24,
    unique=True,
)
cid_lists = st.lists(
    st.tuples(st.sampled_from(ROOMS), st.text("abc1@.", min_size=1, max_size=4)).map("-".join),
    max_size=9,
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def outcome(fn):
    """Return ``("ok", value)`` or ``("error", message)`` so raising paths compare too."""
    try:
        return ("ok", fn())
    except AllocationError as exc:
        return ("error", str(exc))


@pytest.fixture(params=ALL)
def name(request) -> str:
    return request.param


@pytest.mark.parametrize("key", ALL)
def test_name_is_rocketmqs(key: str) -> None:
    assert BUILDERS[key]().name == key.split("-v")[0].split("@")[0]


@pytest.mark.parametrize("key", ["AVG@PushConsumer", "AVG@PullConsumer"])
def test_a_consumer_given_no_strategy_runs_the_registrys_avg(key: str) -> None:
    assert type(BUILDERS[key]()) is type(get_strategy("AVG")) is AllocateMessageQueueAveragely


@pytest.mark.parametrize("key", CHECKED)
def test_empty_current_cid_raises(key: str) -> None:
    with pytest.raises(AllocationError, match="currentCID is empty"):
        BUILDERS[key]().allocate("G", "", CONFIGURED, ["hz-1"])


@pytest.mark.parametrize("key", CHECKED)
@pytest.mark.parametrize("mq_all", [[], None])
def test_empty_queue_list_raises(key: str, mq_all) -> None:
    with pytest.raises(AllocationError, match="mqAll is null or mqAll empty"):
        BUILDERS[key]().allocate("G", "hz-1", mq_all, ["hz-1"])


@pytest.mark.parametrize("key", CHECKED)
@pytest.mark.parametrize("cid_all", [[], None])
def test_empty_client_list_raises(key: str, cid_all) -> None:
    with pytest.raises(AllocationError, match="cidAll is null or cidAll empty"):
        BUILDERS[key]().allocate("G", "hz-1", CONFIGURED, cid_all)


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        get_strategy("AVG").allocate("G", "", CONFIGURED, ["x"])


@pytest.mark.parametrize("key", CHECKED)
def test_client_not_in_list_gets_nothing(key: str) -> None:
    assert BUILDERS[key]().allocate("G", "hz-stranger", CONFIGURED, ["hz-1", "sh-2"]) == []


@pytest.mark.parametrize("key", CHECKED)
def test_group_of_empty_client_list_is_empty(key: str) -> None:
    assert allocate_all(BUILDERS[key](), CONFIGURED, []) == {}


@pytest.mark.parametrize("key", CHECKED)
def test_group_with_empty_cid_raises_like_allocate(key: str) -> None:
    with pytest.raises(AllocationError, match="currentCID is empty"):
        allocate_all(BUILDERS[key](), CONFIGURED, ["hz-1", ""])


@SETTINGS
@given(mqs=queue_lists, cids=cid_lists, key=st.sampled_from(ALL))
def test_allocate_all_equals_per_cid_allocate(mqs, cids, key) -> None:
    strategy = BUILDERS[key]()
    sorted_mqs, sorted_cids = sort_for_rebalance(mqs, cids)
    expected = outcome(lambda: per_cid(strategy, sorted_mqs, sorted_cids))
    got = outcome(lambda: allocate_all(strategy, mqs, cids))
    if expected[0] == "ok" and got[0] == "ok":
        assert list(got[1]) == list(expected[1])  # same keys, in sorted cid order
    assert got == expected


@SETTINGS
@given(mqs=queue_lists, cids=cid_lists, key=st.sampled_from(ALL))
def test_strategies_do_not_sort_or_mutate(mqs, cids, key) -> None:
    strategy = BUILDERS[key]()
    mqs_before, cids_before = copy.copy(mqs), copy.copy(cids)
    expected = outcome(lambda: per_cid(strategy, mqs, cids))
    assert outcome(lambda: group_allocate(strategy, "G", mqs, cids)) == expected
    assert (mqs, cids) == (mqs_before, cids_before)


@SETTINGS
@given(mqs=queue_lists, cids=cid_lists, key=st.sampled_from(ALL))
def test_results_are_deterministic(mqs, cids, key) -> None:
    first = outcome(lambda: allocate_all(BUILDERS[key](), mqs, cids))
    again = outcome(lambda: allocate_all(BUILDERS[key](), list(reversed(mqs)), list(reversed(cids))))
    assert first == again


@SETTINGS
@given(
    mqs=queue_lists.filter(bool),
    cids=cid_lists.filter(bool).map(lambda c: list(dict.fromkeys(c))),
    key=st.sampled_from(PARTITIONING),
)
def test_every_queue_has_exactly_one_owner(mqs, cids, key) -> None:
    # Distinct client ids, as the broker reports them: a duplicated id makes Java's indexOf
    # skip the duplicate's share, leaving queues unowned (see test_averagely).
    result = allocate_all(BUILDERS[key](), mqs, cids)
    held = owners(result)
    assert set(held) == set(mqs)
    assert all(len(holders) == 1 for holders in held.values())


@SETTINGS
@given(mqs=queue_lists.filter(bool), cids=cid_lists.filter(bool), key=st.sampled_from(CHECKED))
def test_results_only_hold_known_queues(mqs, cids, key) -> None:
    result = allocate_all(BUILDERS[key](), mqs, cids)
    assert {mq for queues in result.values() for mq in queues} <= set(mqs)

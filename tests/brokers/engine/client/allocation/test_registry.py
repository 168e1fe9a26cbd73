"""The registry: RocketMQ names, parameter checks, third-party strategies."""

from __future__ import annotations

import pytest

from brokers.engine.client.allocation import (
    AllocateMessageQueueStrategy,
    GroupAllocateMessageQueueStrategy,
    MessageQueue,
    StrategyParameterError,
    UnknownStrategyError,
    allocate_all,
    get_strategy,
    register_strategy,
    required_parameters,
    strategy_names,
)
from brokers.engine.client.allocation import registry
from tests.brokers.engine.client.allocation._support import DashResolver


def test_rocketmq_names_in_order() -> None:
    assert strategy_names()[:6] == (
        "AVG",
        "AVG_BY_CIRCLE",
        "CONFIG",
        "MACHINE_ROOM",
        "MACHINE_ROOM_NEARBY",
        "CONSISTENT_HASH",
    )


@pytest.mark.parametrize(
    ("name", "params", "expected_name"),
    [
        ("AVG", {}, "AVG"),
        ("AVG_BY_CIRCLE", {}, "AVG_BY_CIRCLE"),
        ("CONFIG", {"message_queue_list": []}, "CONFIG"),
        ("MACHINE_ROOM", {"consumeridcs": ["hz"]}, "MACHINE_ROOM"),
        ("MACHINE_ROOM_NEARBY", {"inner": "AVG", "resolver": DashResolver()}, "MACHINE_ROOM_NEARBY-AVG"),
        ("MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE", {"resolver": DashResolver()}, "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE"),
        ("CONSISTENT_HASH", {}, "CONSISTENT_HASH"),
        ("CONSISTENT_HASH", {"virtual_node_cnt": 3}, "CONSISTENT_HASH"),
    ],
)
def test_get_strategy_builds_protocol_objects(name: str, params: dict, expected_name: str) -> None:
    strategy = get_strategy(name, **params)
    assert isinstance(strategy, GroupAllocateMessageQueueStrategy)
    assert strategy.name == expected_name


def test_consistent_hash_default_is_ten_virtual_nodes() -> None:
    assert get_strategy("CONSISTENT_HASH").virtual_node_cnt == 10


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("CONFIG", {}, "message_queue_list"),
        ("MACHINE_ROOM", {}, "consumeridcs"),
        ("MACHINE_ROOM_NEARBY", {"inner": "AVG"}, "resolver"),
        ("MACHINE_ROOM_NEARBY", {"resolver": DashResolver()}, "inner"),
        ("AVG", {"virtual_node_cnt": 3}, "bad parameters"),
        ("CONSISTENT_HASH", {"virtual_node_cnt": -1}, "virtualNodeCnt"),
        ("MACHINE_ROOM_NEARBY-AVG", {"inner": "AVG", "resolver": DashResolver()}, "already"),
    ],
)
def test_parameter_mistakes_raise(name: str, params: dict, message: str) -> None:
    with pytest.raises(StrategyParameterError, match=message):
        get_strategy(name, **params)


@pytest.mark.parametrize("name", ["avg", "ROUND_ROBIN", "", "MACHINE_ROOM_NEARBY-NOPE"])
def test_unknown_names_raise(name: str) -> None:
    with pytest.raises(UnknownStrategyError):
        get_strategy(name, resolver=DashResolver())


def test_required_parameters() -> None:
    assert required_parameters("AVG") == ()
    assert required_parameters("MACHINE_ROOM_NEARBY") == ("inner", "resolver")


class FirstQueueOnly:
    """A third-party strategy with only ``allocate``: the first client takes the first queue."""

    name = "FIRST_ONLY"

    def allocate(self, consumer_group, current_cid, mq_all, cid_all):
        return [mq_all[0]] if current_cid == cid_all[0] else []


def test_register_a_third_party_strategy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))
    monkeypatch.setattr(registry, "_REQUIRED", dict(registry._REQUIRED))
    register_strategy("FIRST_ONLY", FirstQueueOnly)
    assert isinstance(FirstQueueOnly(), AllocateMessageQueueStrategy)
    assert not isinstance(FirstQueueOnly(), GroupAllocateMessageQueueStrategy)
    with pytest.raises(StrategyParameterError):
        register_strategy("FIRST_ONLY", FirstQueueOnly)
    mqs = [MessageQueue("T", "b", 1), MessageQueue("T", "a", 0)]
    # No allocate_group: allocate_all falls back to one allocate call per client.
    assert allocate_all(get_strategy("FIRST_ONLY"), mqs, ["y", "x"]) == {"x": [mqs[1]], "y": []}
    assert "FIRST_ONLY" in strategy_names()

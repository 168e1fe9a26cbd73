"""Convergence, without a cluster: members' reports in, "converged or not, and why" out."""

from __future__ import annotations

from brokers.engine.common.message_queue import MessageQueue
from consumers import live
from brokers.engine.client.allocation import allocate_all, get_strategy
from health.scan import rising_backlogs
from consumers.rebalance.convergence import Observation, assess, moved, owners_text
from consumers.types import MemberReport

QUEUES = tuple(MessageQueue("T", b, i) for b in ("broker-a", "broker-b") for i in range(4))


def observe(
    assignment: dict[str, list[MessageQueue]], strategy: str = "AVG", silent: tuple[str, ...] = ()
) -> Observation:
    reports = tuple(
        MemberReport(
            cid,
            cid not in silent,
            strategy if cid not in silent else live.UNKNOWN,
            "TAG:*",
            tuple(qs) if cid not in silent else (),
        )
        for cid, qs in sorted(assignment.items())
    )
    check = live.live_check("G", "T", QUEUES, reports)
    return Observation("G", tuple(sorted(assignment)), ("127.0.0.1:10911",), "CLUSTERING", (check,))


def avg(cids) -> dict[str, list[MessageQueue]]:
    return {c: list(qs) for c, qs in allocate_all(get_strategy("AVG"), QUEUES, cids).items()}


def test_the_expected_allocation_is_the_target_when_the_strategy_is_known() -> None:
    four = ["c1", "c2", "c3", "c4"]
    done = assess(observe(avg(four)))
    assert done.converged and done.queues_settled == done.queues_total == 8 and done.detail == ""
    stale = avg(["c1", "c2", "c3"]) | {"c4": avg(four)["c4"]}  # the worked example: c4 joined, nobody else was told
    verdict = assess(observe(stale))
    assert not verdict.converged and "not yet held as AVG expects" in verdict.detail
    assert verdict.queues_settled == 3  # a0, a1 (c1) and a3 (c2) are where AVG over four puts them
    obs = observe(stale)
    assert obs.expected_known and obs.expected() == {q: c for c, qs in avg(four).items() for q in qs}


def test_moves_are_queues_whose_holders_changed() -> None:
    four = ["c1", "c2", "c3", "c4"]
    before = observe(avg(["c1", "c2", "c3"]) | {"c4": avg(four)["c4"]}).holders()
    after = observe(avg(four)).holders()
    count = sum(moved(owners_text(before[q]), owners_text(after[q])) for q in QUEUES)
    assert count == 5  # a2, b0, b1, b2, b3 (the docstring's example)
    assert owners_text(before[MessageQueue("T", "broker-b", 3)]) == "c3, c4"
    assert not moved("c1, c2", "c2, c1") and moved("", "c1") and moved("c1", "")


def test_a_strategy_that_needs_configuration_converges_on_each_queue_held_once_and_stable() -> None:
    once = {"c1": list(QUEUES[:5]), "c2": list(QUEUES[5:])}
    first = assess(observe(once, strategy="CONFIG"))
    assert not first.converged and "stable" in first.detail  # one look is not enough
    obs = observe(once, strategy="CONFIG")
    assert not obs.expected_known and obs.expected() is None
    assert assess(obs, previous=obs.holders()).converged
    moving = observe({"c1": list(QUEUES[:4]), "c2": list(QUEUES[4:])}, strategy="CONFIG")
    assert not assess(moving, previous=obs.holders()).converged  # changed since the previous look
    gap = assess(observe({"c1": list(QUEUES[:3]), "c2": list(QUEUES[2:7])}, strategy="CONFIG"))
    assert not gap.converged and "1 held by nobody" in gap.detail and "1 held twice" in gap.detail


def test_a_member_that_does_not_answer_blocks_convergence() -> None:
    verdict = assess(observe(avg(["c1", "c2"]), silent=("c2",)))
    assert not verdict.converged and verdict.detail == "no running info from c2"
    offline = Observation("G", (), (), None, ())
    assert not assess(offline).converged and "online" in assess(offline).detail


def test_backlog_rising_needs_growth_at_every_scan_and_enough_in_all() -> None:
    history = [
        {"G": 100, "H": 100, "K": 5},
        {"G": 400, "H": 900, "K": 6},
        {"G": 900, "H": 800, "K": 7},
        {"G": 1500, "H": 2000, "K": 8},
    ]
    alerts = rising_backlogs(history, scans=3, rise_min=1000)
    assert [(a.kind, a.target) for a in alerts] == [("group_backlog_rising", "G")]
    assert "100 → 1,500 messages (+1,400)" in alerts[0].message
    assert rising_backlogs(history[1:], scans=3, rise_min=1000) == []  # not enough scans yet
    assert rising_backlogs([{"G": 1}, {"G": 2}, {"G": 3}, {}], scans=3, rise_min=1) == []  # gone from the last scan

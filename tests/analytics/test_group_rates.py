"""Consume rates of groups from the sampler's two newest rounds in a real lake directory: per broker,
summed over brokers; a queue committed backwards counts 0; a stale lake or a single round gives no rate."""
from __future__ import annotations

from datetime import timedelta

from analytics.group_rates import group_consume_tps
from tests.analytics._lake import at, ms, sample_round


def test_rates_are_offsets_moved_over_the_time_between_the_two_newest_rounds(lake) -> None:
    sample_round(lake, at("10:00:00"), "broker-a", offsets=[("billing", "orders", 0, 100, 500), ("billing", "orders", 1, 50, 500)])
    sample_round(lake, at("10:00:10"), "broker-a", offsets=[("billing", "orders", 0, 150, 500), ("billing", "orders", 1, 70, 500),
                                                            ("audit", "orders", 0, 9, 500)])
    sample_round(lake, at("10:00:00"), "broker-b", offsets=[("billing", "orders", 0, 10, 99)])
    sample_round(lake, at("10:00:20"), "broker-b", offsets=[("billing", "orders", 0, 50, 99)])
    rates = group_consume_tps(root=lake, now_ms=ms(at("10:00:25")))
    assert rates == {"billing": (50 + 20) / 10 + 40 / 20}  # "audit" has one round only: no rate yet


def test_an_offset_reset_backwards_counts_zero_and_older_rounds_are_ignored(lake) -> None:
    sample_round(lake, at("09:59:40"), "broker-a", offsets=[("billing", "orders", 0, 0, 500)])
    sample_round(lake, at("10:00:00"), "broker-a", offsets=[("billing", "orders", 0, 400, 500), ("billing", "orders", 1, 10, 500)])
    sample_round(lake, at("10:00:10"), "broker-a", offsets=[("billing", "orders", 0, 100, 500), ("billing", "orders", 1, 30, 500)])
    assert group_consume_tps(root=lake, now_ms=ms(at("10:00:11"))) == {"billing": 2.0}


def test_no_rounds_or_a_stale_lake_is_no_data(lake) -> None:
    assert group_consume_tps(root=lake, now_ms=ms(at("10:00:00"))) == {}
    sample_round(lake, at("10:00:00"), "broker-a", offsets=[("billing", "orders", 0, 0, 5)])
    sample_round(lake, at("10:00:10"), "broker-a", offsets=[("billing", "orders", 0, 5, 5)])
    assert group_consume_tps(root=lake, now_ms=ms(at("10:00:10") + timedelta(minutes=1))) == {"billing": 0.5}
    assert group_consume_tps(root=lake, now_ms=ms(at("10:00:10") + timedelta(minutes=10))) == {}

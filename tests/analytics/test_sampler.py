"""The metrics sampler against real brokers: one answer per broker becomes one Parquet file per
dataset per broker in the hour's partition; a broker that does not answer is only reported."""

from __future__ import annotations

from datetime import datetime, timezone

import pyarrow.parquet as pq

from analytics.lake import GROUP_SAMPLES, QUEUE_SAMPLES, SCHEMAS, partition_dir
from analytics.sampler import metrics_sample
from brokers.engine.common.message_queue import MessageQueue
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import send


def _files(root, dataset):
    return sorted((root / dataset).rglob("*.parquet"))


def _broker_of(path) -> str:
    """The broker of ``part-<epoch_ms>-<broker>-<uuid8>.parquet``."""
    return path.stem.split("-", 2)[2].rsplit("-", 1)[0]


def test_a_round_writes_every_queue_and_committed_offset_one_file_per_broker_and_dataset(
    console_cluster, console_admin, topic_name, members, lake
):
    create_topic(console_admin, console_cluster, topic_name, queues=2)
    mq = MessageQueue(topic_name, "broker-a", 1)
    send(console_cluster, topic_name, 5, mq=mq, body=b"x" * 100)
    group = "G_" + topic_name[2:]
    members(group, topic_name, "one").update_offset(mq, 3)

    result = metrics_sample()
    assert result.brokers == ("broker-a", "broker-b") and result.errors == {}
    queue_files = _files(lake, QUEUE_SAMPLES)
    # one answer per broker: one file each, all of its rows at one instant, in that instant's hour
    assert sorted(_broker_of(f) for f in queue_files) == ["broker-a", "broker-b"]
    rows = []
    for f in queue_files:
        table = pq.read_table(f)
        assert table.schema.equals(SCHEMAS[QUEUE_SAMPLES], check_metadata=False)
        [ts] = set(table.column("ts").to_pylist())
        assert f.name.startswith(f"part-{int(ts.timestamp() * 1000)}-")
        assert f.parent == partition_dir(lake, QUEUE_SAMPLES, ts)
        assert (
            f.parent.name == f"hour={ts.astimezone(timezone.utc).hour}"
            and f.parent.parent.name == f"date={ts:%Y-%m-%d}"
        )
        rows += table.to_pylist()
    assert len(rows) == result.queue_rows
    mine = {(r["broker"], r["queue_id"]): r for r in rows if r["topic"] == topic_name}
    assert set(mine) == {(b, q) for b in ("broker-a", "broker-b") for q in (0, 1)}
    assert mine[("broker-a", 1)]["max_offset"] == 5 and mine[("broker-a", 1)]["put_bytes"] > 500
    assert mine[("broker-a", 0)]["max_offset"] == 0 and mine[("broker-b", 1)]["min_offset"] == 0

    groups = [r for f in _files(lake, GROUP_SAMPLES) for r in pq.read_table(f).to_pylist()]
    assert len(groups) == result.group_rows and len(_files(lake, GROUP_SAMPLES)) <= 2
    assert [
        (r["broker"], r["group"], r["queue_id"], r["committed_offset"], r["max_offset"])
        for r in groups
        if r["topic"] == topic_name
    ] == [("broker-a", group, 1, 3, 5)]
    assert not list(lake.rglob(".*"))  # no temporary file left behind

    again = metrics_sample()
    assert len(_files(lake, QUEUE_SAMPLES)) == 4 and len(again.files) == len(result.files)


def test_a_broker_that_does_not_answer_is_reported_and_the_others_are_written(
    console_cluster, unused_addr, lake, caplog
):
    # broker-b hangs or its host is gone: the name server still routes to an address where nothing answers
    result = metrics_sample(brokers={"broker-a": console_cluster.broker_addr("broker-a"), "broker-b": unused_addr})
    assert result.brokers == ("broker-a", "broker-b")
    assert set(result.errors) == {"broker-b"} and unused_addr in result.errors["broker-b"]
    assert {_broker_of(f) for f in _files(lake, QUEUE_SAMPLES)} == {"broker-a"}
    assert result.queue_rows > 0
    assert "broker broker-b did not answer" in caplog.text


def test_partitions_since_lists_the_hours_a_refresh_needs(lake):
    from analytics.lake import lake_prune, partitions_since, write_samples

    for hour in (22, 23):
        write_samples(
            lake,
            QUEUE_SAMPLES,
            ts_ms=int(datetime(2026, 11, 21, hour, 30, tzinfo=timezone.utc).timestamp() * 1000),
            broker="broker-a",
            columns={
                "broker": ["broker-a"],
                "topic": ["t"],
                "queue_id": [0],
                "min_offset": [0],
                "max_offset": [1],
                "put_bytes": [None],
            },
        )
    write_samples(
        lake,
        QUEUE_SAMPLES,
        ts_ms=int(datetime(2026, 11, 22, 0, 5, tzinfo=timezone.utc).timestamp() * 1000),
        broker="broker-a",
        columns={
            "broker": ["broker-a"],
            "topic": ["t"],
            "queue_id": [0],
            "min_offset": [0],
            "max_offset": [2],
            "put_bytes": [10],
        },
    )
    since = partitions_since(lake, QUEUE_SAMPLES, datetime(2026, 11, 21, 23, 59, tzinfo=timezone.utc))
    assert [(p.parent.name, p.name) for p in since] == [("date=2026-11-21", "hour=23"), ("date=2026-11-22", "hour=0")]
    assert len(partitions_since(lake, QUEUE_SAMPLES, None)) == 3
    assert partitions_since(lake, GROUP_SAMPLES, None) == []
    assert lake_prune(lake, before=datetime(2026, 11, 22, 0, 0, tzinfo=timezone.utc)) == 2
    assert [p.parent.name for p in partitions_since(lake, QUEUE_SAMPLES, None)] == ["date=2026-11-22"]


def test_compaction_merges_each_closed_hour_into_one_file_and_keeps_every_row_once(lake):
    import shutil
    from datetime import timedelta

    import pyarrow as pa

    from analytics.lake import lake_compact
    from tests.analytics._lake import sample_round

    closed = datetime(2026, 11, 22, 10, 0, tzinfo=timezone.utc)
    for i in range(4):
        for broker in ("broker-a", "broker-b"):
            sample_round(
                lake,
                closed + timedelta(seconds=10 * i),
                broker,
                queues=[("orders", 0, 10 * i, 100 * i)],
                offsets=[("billing", "orders", 0, 5 * i, 10 * i)],
            )
    sample_round(
        lake, closed + timedelta(hours=1, seconds=5), "broker-a", queues=[("orders", 0, 50, 500)]
    )  # the open hour
    closed_dir = partition_dir(lake, QUEUE_SAMPLES, closed)
    first = sorted(closed_dir.glob("*.parquet"))[0]
    shutil.copy(first, closed_dir / first.name.replace("part-", "part-9"))  # a crash after a merge's rename: rows twice
    (closed_dir / ".part-x.parquet.tmp").write_bytes(b"half")  # a writer's leftover: not data

    def rows(dataset: str, when: datetime) -> list[dict]:
        directory = partition_dir(lake, dataset, when)
        tables = [pq.read_table(f) for f in sorted(directory.glob("*.parquet")) if not f.name.startswith(".")]
        return sorted(pa.concat_tables(tables).to_pylist(), key=lambda r: (r["ts"], r["broker"]))

    before_q, before_g = rows(QUEUE_SAMPLES, closed), rows(GROUP_SAMPLES, closed)
    assert len(before_q) == 9 and len(before_g) == 8
    assert lake_compact(lake, before=closed + timedelta(hours=1, minutes=5)) == 2  # both datasets of the closed hour
    assert [f.name.split("-")[2] for f in closed_dir.glob("*.parquet")] == ["compacted"]
    assert rows(QUEUE_SAMPLES, closed) == sorted(
        {tuple(r.items()): r for r in before_q}.values(), key=lambda r: (r["ts"], r["broker"])
    )
    assert rows(GROUP_SAMPLES, closed) == before_g
    assert (
        len(list(partition_dir(lake, QUEUE_SAMPLES, closed + timedelta(hours=1)).glob("*.parquet"))) == 1
    )  # open hour untouched
    assert lake_compact(lake, before=closed + timedelta(hours=1, minutes=5)) == 0  # nothing left to merge


def test_compaction_merges_the_open_hour_up_to_the_settled_samples(lake):
    """The live refresh reads the open hour every minute: its settled files are merged, the newest left."""
    from datetime import timedelta

    from analytics.lake import lake_compact
    from tests.analytics._lake import sample_round

    hour = datetime(2026, 11, 22, 14, 0, tzinfo=timezone.utc)
    for i in range(12):  # 14:00:00 .. 14:01:50
        sample_round(lake, hour + timedelta(seconds=10 * i), "broker-a", queues=[("orders", 0, 10 * i, 100 * i)])
    directory = partition_dir(lake, QUEUE_SAMPLES, hour)
    assert lake_compact(lake, before=hour + timedelta(minutes=1)) == 1
    names = sorted(f.name for f in directory.glob("*.parquet"))
    assert len(names) == 7 and sum("-compacted-" in n for n in names) == 1  # 14:00:00-14:00:50 merged, 6 newer left
    assert lake_compact(lake, before=hour + timedelta(minutes=2)) == 1  # a minute later: the merged file and the rest
    [merged] = directory.glob("*.parquet")
    assert [r["max_offset"] for r in pq.read_table(merged).to_pylist()] == [10 * i for i in range(12)]

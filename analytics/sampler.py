"""The metrics sampler: every queue's max offset and every group's committed offsets, into the lake.

One round is one GANTRY_GET_QUEUE_STATS request per broker, all at once
(:func:`brokers.gateway.stats.broker_stats`); each broker answers at one instant of its own clock,
and that instant is the ``ts`` of all its rows. A broker that does not answer is left out of the
round (logged and returned in ``errors``): the others' rows are still written, and the jobs
compute rates from whatever consecutive samples a queue has.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from analytics.lake import GROUP_SAMPLES, QUEUE_SAMPLES, lake_dir, write_samples
from brokers.gateway.stats import BrokerQueueStats, broker_stats

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SampleRound:
    """What one round wrote: rows per dataset, the files, and the brokers that failed (name -> reason)."""

    brokers: tuple[str, ...]
    queue_rows: int
    group_rows: int
    files: tuple[str, ...]
    errors: dict[str, str] = field(default_factory=dict)


def _queue_columns(stats: BrokerQueueStats) -> dict[str, list]:
    return {
        "broker": [stats.broker_name] * len(stats.queues),
        "topic": [q.topic for q in stats.queues],
        "queue_id": [q.queue_id for q in stats.queues],
        "min_offset": [q.min_offset for q in stats.queues],
        "max_offset": [q.max_offset for q in stats.queues],
        "put_bytes": [q.put_bytes for q in stats.queues],
    }


def _group_columns(stats: BrokerQueueStats) -> dict[str, list]:
    return {
        "broker": [stats.broker_name] * len(stats.offsets),
        "group": [o.group for o in stats.offsets],
        "topic": [o.topic for o in stats.offsets],
        "queue_id": [o.queue_id for o in stats.offsets],
        "committed_offset": [o.committed_offset for o in stats.offsets],
        "max_offset": [o.max_offset for o in stats.offsets],
    }


def metrics_sample(*, brokers: dict[str, str] | None = None, root: Path | None = None) -> SampleRound:
    """Sample every broker once and append the rows to the lake.

    ``brokers`` (name -> master address) defaults to every master the current set's name server
    knows; ``root`` defaults to the current set's lake (analytics.lake.lake_dir). A name server that does not
    answer raises (there is nothing to sample); a broker that does not answer is only reported.
    """
    root = lake_dir() if root is None else Path(root)
    answers = broker_stats(brokers)
    files: list[str] = []
    errors: dict[str, str] = {}
    queue_rows = group_rows = 0
    for name, answer in sorted(answers.items()):
        if not isinstance(answer, BrokerQueueStats):
            errors[name] = str(answer)
            log.warning("metrics sample: broker %s did not answer: %s", name, answer)
            continue
        # The broker's own name in the rows: the name server's key and the broker agree, but the
        # broker is the one that knows.
        for dataset, columns in ((QUEUE_SAMPLES, _queue_columns(answer)), (GROUP_SAMPLES, _group_columns(answer))):
            path = write_samples(root, dataset, ts_ms=answer.timestamp_ms, broker=answer.broker_name, columns=columns)
            if path is not None:
                files.append(str(path))
        queue_rows += len(answer.queues)
        group_rows += len(answer.offsets)
    return SampleRound(tuple(sorted(answers)), queue_rows, group_rows, tuple(files), errors)

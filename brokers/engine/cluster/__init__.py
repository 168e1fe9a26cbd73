"""The one way to assemble a cluster: a :class:`ClusterSpec` run in-process (:class:`EngineCluster`,
:class:`ThreadedCluster`) or as processes (:class:`~brokers.engine.cluster.processes.ProcessCluster`).

Callers: the test fixtures (tests/fixtures/cluster.py, the broker tests' ``engine_cluster``), the
benchmarks (bench/processes.py) and ``manage.py run_cluster``.
"""

from __future__ import annotations

from brokers.engine.cluster.harness import EngineCluster, ThreadedCluster
from brokers.engine.cluster.spec import BrokerSpec, ClusterSpec, ClusterSpecError, GroupSpec, broker_config

__all__ = [
    "BrokerSpec",
    "ClusterSpec",
    "ClusterSpecError",
    "EngineCluster",
    "GroupSpec",
    "ThreadedCluster",
    "broker_config",
]

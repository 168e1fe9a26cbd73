"""The engine's value types the gateway answers with, for the apps to import from here.

Frozen dataclasses read from the tier's answers (:mod:`brokers.engine.client.admin_types`) and the
client's limits; an app names them in its own signatures without reaching into the engine's admin
client. Types that belong to one concept are re-exported by its module instead (ACL accounts by
:mod:`.acl`, promotion results and roles by :mod:`.promotion`, a group's backlog helpers by :mod:`.groups`).
"""

from __future__ import annotations

from brokers.engine.client.admin_plans import MAX_TIMESTAMP
from brokers.engine.client.admin_types import BrokerData, BrokerInfo, ClusterInfo, ConsumerRunningInfo, TopicRouteData

__all__ = ["MAX_TIMESTAMP", "BrokerData", "BrokerInfo", "ClusterInfo", "ConsumerRunningInfo", "TopicRouteData"]

"""The one gateway to the tier on the Django side: every app reads and drives the tier through here.

One module per concept, each running its requests on the shared admin client (:mod:`.client`),
batched (one request per broker, or one Fanout for any number of queues or members), the bodies
read by the engine's client (``brokers/engine/client/admin_*bodies.py``, pure Python):

- :mod:`.client` the shared admin client, :func:`~.client.run` for plans: private to the gateway (and
  the engine's tools, mqadmin and the management commands); apps call the modules below;
- :mod:`.errors` every way a call fails, typed (TopicNotFound, GroupNotFound, NoPermission, ...): what
  apps catch, never a response code; :mod:`.types` the engine's value types apps name (ClusterInfo, ...);
- :mod:`.client_lifecycle` closing the shared clients (a name-server set edited or removed);
- :mod:`.cluster` name servers, cluster info, :func:`~.cluster.masters` (broker name -> master
  address, the one map), slaves and broker groups, runtime infos;
- :mod:`.topics` every broker's topic table, who consumes a topic, its stats, creating and deleting it;
- :mod:`.topic_routes` a topic's route (TopicNotFound, or NotFound for a page);
- :mod:`.message_keys` messages by key (QUERY_MESSAGE); :mod:`.console_producer` the console's producer;
- :mod:`.groups` every group of each broker: configs, committed offsets, lag, TPS; one group's consume stats;
- :mod:`.connections` groups' live connections and their members' running infos;
- :mod:`.queues` per-queue offsets, offset resets, reading messages without consuming;
- :mod:`.stats` the metrics sampler's per-broker queue and group offsets;
- :mod:`.rebalance` asking brokers to make a group rebalance now;
- :mod:`.store_disk` a broker store's disk usage, retention settings and refusals, from its runtime info;
- :mod:`.overview` the cluster overview (name servers, brokers, sightings, alerts).

Apps import the modules (``from brokers.gateway import cluster``); this package re-exports nothing,
so importing one module does not load the others (:mod:`.overview` needs the app registry).
"""

"""The one gateway to the tier on the Django side: every app reads and drives the tier through here.

One module per concept, each running its requests on the shared admin client (:mod:`.client`),
batched (one request per broker, or one Fanout for any number of queues or members), the bodies
read by the engine's client (``brokers/engine/client/admin_*bodies.py``, pure Python):

- :mod:`.client` the shared admin client, :func:`~.client.run` for plans;
- :mod:`.cluster` name servers, cluster info, :func:`~.cluster.masters` (broker name -> master
  address, the one map), slaves and broker groups, runtime infos;
- :mod:`.topics` every broker's topic table, who consumes a topic, deleting a topic;
- :mod:`.groups` every group of each broker: configs, committed offsets, lag, TPS;
- :mod:`.connections` groups' live connections and their members' running infos;
- :mod:`.queues` per-queue offsets, offset resets, reading messages without consuming;
- :mod:`.stats` the metrics sampler's per-broker queue and group offsets;
- :mod:`.rebalance` asking brokers to make a group rebalance now;
- :mod:`.store_disk` a broker store's disk usage, retention settings and refusals, from its runtime info;
- :mod:`.overview` the cluster overview (name servers, brokers, sightings, alerts).

Apps import the modules (``from brokers.gateway import cluster``); this package re-exports nothing,
so importing one module does not load the others (:mod:`.overview` needs the app registry).
"""

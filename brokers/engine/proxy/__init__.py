"""The 5.x clients' gRPC endpoint (``apache.rocketmq.v2.MessagingService``), served in a broker's process.

- :mod:`.endpoint`: the grpc.aio server on ``--grpc-port``, its bounds and TLS;
- :mod:`.service`: the RPCs; :mod:`.calls`: each as the broker's 4.x remoting requests, run by the
  broker's own processors on a :mod:`.local_channel` per client (RocketMQ 5's proxy in local mode);
- :mod:`.auth`: the 5.x signature and the ACL; :mod:`.sessions`: the clients and their settings;
- :mod:`.convert`: 5.x messages to and from the broker's; :mod:`.routes`: routes and assignments.
"""

from __future__ import annotations

import os

# Before grpc is imported: its fork handlers, with its threads busy, make a forked child fail now and then
# (a subprocess started with preexec_fn: one in ten beside a busy endpoint). Nothing here relies on grpc in
# a forked child, so they are off unless the environment says otherwise.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

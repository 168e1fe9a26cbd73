"""The 5.x clients' gRPC endpoint (``apache.rocketmq.v2.MessagingService``), served in a broker's process.

- :mod:`.endpoint`: the grpc.aio server on ``--grpc-port``, its bounds and TLS;
- :mod:`.service`: the RPCs; :mod:`.calls`: each as the broker's 4.x remoting requests, run by the
  broker's own processors on a :mod:`.local_channel` per client (RocketMQ 5's proxy in local mode);
- :mod:`.auth`: the 5.x signature and the ACL; :mod:`.sessions`: the clients and their settings;
- :mod:`.convert`: 5.x messages to and from the broker's; :mod:`.routes`: routes and assignments.
"""

"""A process serving gRPC can still start subprocesses: with the endpoint busy, 40 children started with a
preexec_fn (as pyspark starts Spark's JVM) all run. With gRPC's fork handlers on, one in ten died and the
analytics tests beside a gRPC-serving cluster failed with JAVA_GATEWAY_EXITED."""

from __future__ import annotations

import subprocess
import threading

import grpc

from brokers.engine.proxy.stubs import definition_pb2 as pb
from brokers.engine.proxy.stubs import service_pb2 as spb
from brokers.engine.proxy.stubs import service_pb2_grpc
from tests.brokers.engine.client._cluster import EmbeddedCluster


def test_children_start_while_the_endpoint_is_busy(tmp_path):
    cluster = EmbeddedCluster(tmp_path, broker_names=("broker-a",), grpc_port=0).start()
    stop = threading.Event()
    try:
        with grpc.insecure_channel(cluster.brokers["broker-a"].grpc_addr) as channel:
            stub = service_pb2_grpc.MessagingServiceStub(channel)

            def busy():
                while not stop.is_set():
                    try:
                        stub.QueryRoute(
                            spb.QueryRouteRequest(topic=pb.Resource(name="no_such_topic")),
                            metadata=[("x-mq-client-id", "busy")],
                            timeout=2,
                        )
                    except grpc.RpcError:
                        pass

            worker = threading.Thread(target=busy, daemon=True)
            worker.start()
            codes = [subprocess.run(["true"], preexec_fn=lambda: None, timeout=30).returncode for _ in range(40)]
            stop.set()
            worker.join(5)
        assert codes == [0] * 40
    finally:
        stop.set()
        cluster.stop()

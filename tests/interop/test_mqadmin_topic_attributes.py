"""Apache's mqadmin 5.x sets a topic's message type on Gantry's brokers (``updateTopic -a +message.type=FIFO``,
RocketMQ 5's ``attributes`` header of UPDATE_AND_CREATE_TOPIC), and Apache's own admin client reads it back
(``DefaultMQAdminExt.examineTopicConfig``, GET_TOPIC_CONFIG, and ``TopicConfig.getTopicMessageType()``, through
``java/ExamineTopicConfig.java``). A value RocketMQ does not know is refused with a remark naming the attribute,
and Apache's 4.9 tool, which sends no attributes, leaves them as they are.
"""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import CLUSTER, wait_for_route
from tests.interop._mqadmin import JVM_OPTIONS, mqadmin, mqadmin5  # noqa: F401 (fixtures)

TOPIC = "Mqadmin5FifoTopic"
BROKERS = ("broker-a", "broker-b")
EXAMINE = pathlib.Path(__file__).parent / "java" / "ExamineTopicConfig.java"


@pytest.fixture(scope="module")
def admin(session_cluster):
    with BlockingMQAdminClient(session_cluster.namesrv_addr, timeout_s=5.0) as client:
        yield client


def examine(classpath: str, home: pathlib.Path, namesrv: str, topic: str) -> list[list[str]]:
    """Apache's admin client's view of the topic on each broker: ``[brokerName, messageType, attributes]``."""
    done = subprocess.run(
        [
            "java",
            *JVM_OPTIONS,
            f"-Duser.home={home}",
            f"-Drmq.logback.configurationFile={home}/conf/rmq_logback_tools.xml",
            "-cp",
            classpath,
            str(EXAMINE),
            namesrv,
            topic,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=home,
    )
    assert done.returncode == 0, f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    return [(line.split(" ", 2) + [""])[:3] for line in done.stdout.splitlines() if line.strip()]


def test_update_topic_sets_message_type_and_apache_reads_it(
    mqadmin5,  # noqa: F811 (the fixture, imported above)
    mqadmin,  # noqa: F811
    interop_classpaths,
    session_cluster,
    admin,
):
    n = session_cluster.namesrv_addr
    created = mqadmin5.run(
        "updateTopic", "-c", CLUSTER, "-t", TOPIC, "-r", "2", "-w", "2", "-a", "+message.type=FIFO", namesrv=n
    )
    out = created.ok()
    assert all(f"create topic to {session_cluster.broker_addr(name)} success." in out for name in BROKERS), out
    wait_for_route(admin, TOPIC, 2)
    for name in BROKERS:
        assert admin.get_all_topic_config(session_cluster.broker_addr(name))[TOPIC].attributes == {
            "message.type": "FIFO"
        }
    assert examine(interop_classpaths["apache5"], mqadmin5.home, n, TOPIC) == [
        [b, "FIFO", "message.type=FIFO"] for b in BROKERS
    ]

    # topicStatus asks each broker for the config (GET_TOPIC_CONFIG) first: the attributes do not trouble it
    status, bad = mqadmin5.run_all(
        (n, "topicStatus", "-t", TOPIC),
        (n, "updateTopic", "-c", CLUSTER, "-t", TOPIC, "-r", "2", "-w", "2", "-a", "+message.type=SOMETIMES"),
    )
    rows = [row for row in status.rows() if row[0].startswith("broker-")]
    assert sorted((row[0], int(row[1])) for row in rows) == [(b, q) for b in BROKERS for q in range(2)]
    code, remark = bad.refusal()
    assert code == 1 and "message.type" in remark and "SOMETIMES" in remark, remark

    # Apache's 4.9 tool sends no attributes header: queue counts change, the message type stays
    mqadmin.run("updateTopic", "-c", CLUSTER, "-t", TOPIC, "-r", "3", "-w", "3", namesrv=n).ok()
    # ... and the 5.x tool may change the message type of an existing topic, as RocketMQ allows
    mqadmin5.run(
        "updateTopic", "-c", CLUSTER, "-t", TOPIC, "-r", "3", "-w", "3", "-a", "+message.type=DELAY", namesrv=n
    ).ok()
    for name in BROKERS:
        config = admin.get_all_topic_config(session_cluster.broker_addr(name))[TOPIC]
        assert (config.read_queue_nums, config.attributes) == (3, {"message.type": "DELAY"}), name
    assert examine(interop_classpaths["apache5"], mqadmin5.home, n, TOPIC) == [
        [b, "DELAY", "message.type=DELAY"] for b in BROKERS
    ]

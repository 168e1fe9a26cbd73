"""/api/v1/metadata against real clusters: the export has RocketMQ's exportMetadata keys (merged across
brokers with the largest queue counts, or one broker's); export -> dry run -> apply into a fresh cluster
recreates the topics and groups; a dry run writes nothing; bad documents are refused naming the field
and change nothing; a viewer may not apply; apply follows its own dry run only, and is audited.
"""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.admin_subscription_groups import get_all_subscription_group_config, update_subscription_group
from brokers.engine.common.subscription_group_config import SubscriptionGroupConfig
from brokers.engine.common.topic_config import TopicConfig
from console.models import AuditEntry
from metadata.document import MAX_OBJECTS

pytestmark = pytest.mark.django_db

URL = "/api/v1/metadata"
TOPIC_KEYS = {
    "topicName",
    "readQueueNums",
    "writeQueueNums",
    "perm",
    "topicFilterType",
    "topicSysFlag",
    "order",
    "attributes",
}
GROUP_KEYS = {
    "groupName",
    "consumeEnable",
    "consumeFromMinEnable",
    "consumeBroadcastEnable",
    "retryQueueNums",
    "retryMaxTimes",
    "brokerId",
    "whichBrokerWhenConsumeSlowly",
    "notifyConsumerIdsChangedEnable",
    "consumeMessageOrderly",
}


def tables(cluster) -> dict:
    """Every broker's topic and subscription group tables: what a dry run or a refusal must not change."""
    with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
        return {
            name: (
                admin.get_all_topic_config(cluster.broker_addr(name)),
                admin.driver.run(get_all_subscription_group_config(cluster.broker_addr(name))),
            )
            for name in cluster.broker_names
        }


def only(document: dict, topic: str, group: str) -> dict:
    """The document cut down to this test's topic and group (the shared cluster holds other tests' too)."""
    return {
        "topicConfigTable": {topic: document["topicConfigTable"][topic]},
        "subscriptionGroupTable": {group: document["subscriptionGroupTable"][group]},
        "exportTime": document["exportTime"],
    }


@pytest.fixture
def defined(console_cluster, console_admin, topic, group) -> tuple[str, str]:
    """The test's topic (4 queues on broker-a, 6 on broker-b) and group (retryMaxTimes 3 on both masters)."""
    console_admin.create_or_update_topic(console_cluster.broker_addr("broker-b"), TopicConfig(topic, 6, 6))
    for name in console_cluster.broker_names:
        console_admin.driver.run(
            update_subscription_group(
                console_cluster.broker_addr(name), SubscriptionGroupConfig(group, retry_max_times=3)
            )
        )
    return topic, group


def test_export_has_rocketmq_keys_merged_or_per_broker(viewer, defined) -> None:
    topic, group = defined
    answer = viewer.get(f"{URL}/export")
    assert answer.status_code == 200, answer.content
    assert answer["Content-Disposition"].startswith('attachment; filename="metadata-every-cluster-')
    document = answer.json()
    assert set(document) == {"topicConfigTable", "subscriptionGroupTable", "exportTime"}
    assert set(document["topicConfigTable"][topic]) == TOPIC_KEYS
    assert set(document["subscriptionGroupTable"][group]) == GROUP_KEYS
    assert document["topicConfigTable"][topic]["readQueueNums"] == 6  # the largest of any broker, as mqadmin merges
    assert document["subscriptionGroupTable"][group]["retryMaxTimes"] == 3
    assert not {"TBW102", "SCHEDULE_TOPIC_XXXX", "broker-a", "DefaultCluster"} & set(
        document["topicConfigTable"]
    )  # system topics
    assert "TOOLS_CONSUMER" not in document["subscriptionGroupTable"]
    assert f"%RETRY%{group}" not in document["topicConfigTable"]
    one = viewer.get(f"{URL}/export", {"broker": "broker-a"}).json()
    assert one["topicConfigTable"][topic]["readQueueNums"] == 4
    assert viewer.get(f"{URL}/export", {"broker": "broker-zz"}).json()["fields"]["broker"]
    both = viewer.get(f"{URL}/export", {"broker": "broker-a", "cluster": "DefaultCluster"})
    assert both.status_code == 400 and both.json()["fields"]["broker"] == ["give a cluster or a broker, not both."]


def test_round_trip_into_a_fresh_cluster(operator, defined, console_cluster, module_cluster, mq_settings) -> None:
    topic, group = defined
    document = only(operator.get(f"{URL}/export").json(), topic, group)
    document["subscriptionGroupTable"]["TOOLS_CONSUMER"] = {
        "groupName": "TOOLS_CONSUMER"
    }  # a system group: skipped, said so
    mq_settings(module_cluster.namesrv_addr)
    before = tables(module_cluster)

    dry = operator.post(f"{URL}/dry-run", {"metadata": document}, format="json")
    assert dry.status_code == 200, dry.content
    plan = dry.json()
    assert plan["applied"] is False and plan["target"] == f"cluster {module_cluster.cluster}"
    assert {(o["kind"], o["name"], o["action"]) for o in plan["objects"]} == {
        ("topic", topic, "create"),
        ("group", group, "create"),
    }
    assert plan["skipped"] == [
        {"kind": "group", "name": "TOOLS_CONSUMER", "reason": "a system group: the brokers make their own"}
    ]
    assert plan["counts"] == {"create": 2, "update": 0, "unchanged": 0, "skipped": 1}
    assert tables(module_cluster) == before  # the dry run wrote nothing

    applied = operator.post(f"{URL}/apply", {"metadata": document, "plan_id": plan["plan_id"]}, format="json")
    assert applied.status_code == 200, applied.content
    assert applied.json()["applied"] is True
    again = operator.get(f"{URL}/export").json()
    assert again["topicConfigTable"][topic] == document["topicConfigTable"][topic]
    assert again["subscriptionGroupTable"][group] == document["subscriptionGroupTable"][group]
    assert {
        o["action"] for o in operator.post(f"{URL}/dry-run", {"metadata": document}, format="json").json()["objects"]
    } == {"unchanged"}

    entry = AuditEntry.objects.get(action="metadata.import")
    assert (entry.actor, entry.result, entry.target) == ("api-operator", "ok", f"cluster {module_cluster.cluster}")
    assert entry.after["created"] == 2 and entry.after["objects"][f"topic:{topic}"]["broker-a"]["readQueueNums"] == 6
    assert entry.before["objects"][f"group:{group}"]["broker-b"]["retryMaxTimes"] is None


def test_update_lists_field_diffs_and_never_shrinks(operator, defined, console_cluster) -> None:
    topic, group = defined
    document = only(operator.get(f"{URL}/export").json(), topic, group)
    document["topicConfigTable"][topic].update(readQueueNums=2, writeQueueNums=2, perm=4)
    document["subscriptionGroupTable"][group]["consumeEnable"] = False
    plan = operator.post(f"{URL}/dry-run", {"metadata": document}, format="json").json()
    by_name = {o["name"]: o for o in plan["objects"]}
    assert by_name[topic]["action"] == "update"
    assert {(c["broker"], c["field"], c["before"], c["after"]) for c in by_name[topic]["changes"]} == {
        ("broker-a", "perm", 6, 4),
        ("broker-b", "perm", 6, 4),
    }
    assert any("readQueueNums stays 6" in n for n in by_name[topic]["notes"])  # queues are never shrunk by an import
    assert {(c["broker"], c["field"], c["before"], c["after"]) for c in by_name[group]["changes"]} == {
        ("broker-a", "consumeEnable", True, False),
        ("broker-b", "consumeEnable", True, False),
    }
    assert (
        operator.post(f"{URL}/apply", {"metadata": document, "plan_id": plan["plan_id"]}, format="json").status_code
        == 200
    )
    state = tables(console_cluster)
    assert (state["broker-a"][0][topic].perm, state["broker-a"][0][topic].read_queue_nums) == (4, 4)
    assert state["broker-b"][1][group].consume_enable is False


@pytest.mark.parametrize(
    ("metadata", "field"),
    [
        ("not a document", "metadata"),
        ({"topics": {}}, "metadata"),
        ({"topicConfigTable": []}, "metadata.topicConfigTable"),
        ({"topicConfigTable": {"bad name!": {"readQueueNums": 4}}}, "metadata.topicConfigTable.bad name!"),
        ({"topicConfigTable": {"MetaT": {"readQueueNums": -1}}}, "metadata.topicConfigTable.MetaT.readQueueNums"),
        ({"topicConfigTable": {"MetaT": {"writeQueueNums": 5000}}}, "metadata.topicConfigTable.MetaT.writeQueueNums"),
        ({"topicConfigTable": {"MetaT": {"perm": 9}}}, "metadata.topicConfigTable.MetaT.perm"),
        ({"topicConfigTable": {"MetaT": {"topicName": "Other"}}}, "metadata.topicConfigTable.MetaT.topicName"),
        (
            {"subscriptionGroupTable": {"MetaG": {"retryMaxTimes": 20000}}},
            "metadata.subscriptionGroupTable.MetaG.retryMaxTimes",
        ),
        (
            {"subscriptionGroupTable": {"MetaG": {"consumeEnable": "yes"}}},
            "metadata.subscriptionGroupTable.MetaG.consumeEnable",
        ),
        ({"topicConfigTable": {f"T{i}": {} for i in range(MAX_OBJECTS + 1)}}, "metadata"),
    ],
)
def test_bad_documents_are_refused_naming_the_field(operator, console_cluster, metadata, field) -> None:
    before = tables(console_cluster)
    for step in ("dry-run", "apply"):
        answer = operator.post(
            f"{URL}/{step}",
            {"metadata": metadata, "plan_id": "x"} if step == "apply" else {"metadata": metadata},
            format="json",
        )
        assert answer.status_code == 400, answer.content
        assert field in answer.json()["fields"], answer.json()
    assert tables(console_cluster) == before


def test_oversized_document_is_refused(operator, console_cluster) -> None:
    big = {
        "topicConfigTable": {
            f"T{i}": {"topicName": f"T{i}", "topicFilterType": "SINGLE_TAG" + " " * 200} for i in range(1500)
        }
    }
    answer = operator.post(f"{URL}/dry-run", {"metadata": big}, format="json")
    assert answer.status_code == 413, answer.content  # the console's body limit comes first


def test_viewer_may_dry_run_but_not_apply_and_apply_needs_its_dry_run(
    viewer, operator, defined, console_cluster
) -> None:
    topic, group = defined
    document = only(operator.get(f"{URL}/export").json(), topic, group)
    document["topicConfigTable"][topic]["perm"] = 2
    plan = viewer.post(f"{URL}/dry-run", {"metadata": document}, format="json").json()
    before = tables(console_cluster)
    refused = viewer.post(f"{URL}/apply", {"metadata": document, "plan_id": plan["plan_id"]}, format="json")
    assert refused.status_code == 403
    assert AuditEntry.objects.filter(action="access.denied", target=f"POST {URL}/apply").exists()
    stale = operator.post(f"{URL}/apply", {"metadata": document, "plan_id": "0" * 32}, format="json")
    assert stale.status_code == 409 and "dry run" in stale.json()["detail"]
    assert tables(console_cluster) == before
    assert AuditEntry.objects.get(action="metadata.import").result == "failed"


def test_export_carries_the_message_type_and_a_reimport_leaves_it(
    operator, defined, console_cluster, console_admin
) -> None:
    topic, group = defined
    for name in console_cluster.broker_names:
        console_admin.create_or_update_topic(
            console_cluster.broker_addr(name), TopicConfig(topic, 6, 6), "+message.type=FIFO"
        )
    document = only(operator.get(f"{URL}/export").json(), topic, group)
    assert document["topicConfigTable"][topic]["attributes"] == {"message.type": "FIFO"}
    plan = operator.post(f"{URL}/dry-run", {"metadata": document}, format="json").json()
    assert {o["name"]: o["action"] for o in plan["objects"]}[topic] == "unchanged"
    document["topicConfigTable"][topic]["attributes"] = {}  # attributes are not imported: no change planned either
    plan = operator.post(f"{URL}/dry-run", {"metadata": document}, format="json").json()
    assert {o["name"]: o["action"] for o in plan["objects"]}[topic] == "unchanged"

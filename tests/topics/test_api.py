"""/api/v1/topics against a real cluster: every endpoint's success, and each refusal.

Refused input changes nothing on the brokers: the tests compare every broker's topic table
(GET_ALL_TOPIC_CONFIG) before and after.
"""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import PullClient
from brokers.engine.common.message_queue import MessageQueue
from console.models import AuditEntry

pytestmark = pytest.mark.django_db

URL = "/api/v1/topics"


def tables(admin_mq: BlockingMQAdminClient, cluster) -> dict:
    """Every broker's topic table: what must not change when input is refused."""
    return {name: admin_mq.get_all_topic_config(cluster.broker_addr(name)) for name in cluster.broker_names}


def create(client, cluster, name: str, **extra):
    body = {"name": name, "cluster": cluster.cluster, **extra}
    response = client.post(URL, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


# -- success -------------------------------------------------------------------------------------


def test_create_in_cluster_mode_puts_the_same_counts_on_every_broker(
    operator, console_cluster, topic_name, console_admin
) -> None:
    body = create(operator, console_cluster, topic_name, read_queue_nums=6, write_queue_nums=4, perm=6)
    assert body["name"] == topic_name and body["type"] == "normal"
    assert set(body["brokers"]) == {"broker-a", "broker-b"}
    for broker in body["brokers"].values():
        assert (broker["read_queue_nums"], broker["write_queue_nums"], broker["perm"]) == (6, 4, 6)
    for name in console_cluster.broker_names:
        tc = console_admin.get_all_topic_config(console_cluster.broker_addr(name))[topic_name]
        assert (tc.read_queue_nums, tc.write_queue_nums, tc.perm) == (6, 4, 6)
    entry = AuditEntry.objects.get(action="topic.create", target=topic_name)
    assert entry.actor == "api-operator" and entry.result == "ok" and entry.source == "api"
    assert entry.before is None and entry.after["broker-a"] == {
        "read_queue_nums": 6,
        "write_queue_nums": 4,
        "perm": 6,
        "message_type": "NORMAL",
    }


def test_create_defaults_are_8_queues_and_perm_6(operator, console_cluster, topic_name) -> None:
    body = create(operator, console_cluster, topic_name)
    assert {(b["read_queue_nums"], b["write_queue_nums"], b["perm"]) for b in body["brokers"].values()} == {(8, 8, 6)}


def test_create_in_broker_mode_sets_counts_per_broker(operator, console_cluster, topic_name, console_admin) -> None:
    body = {
        "name": topic_name,
        "perm": 6,
        "brokers": {
            "broker-a": {"read_queue_nums": 4, "write_queue_nums": 4},
            "broker-b": {"read_queue_nums": 2, "write_queue_nums": 1, "perm": 4},
        },
    }
    response = operator.post(URL, body, format="json")
    assert response.status_code == 201, response.content
    brokers = response.json()["brokers"]
    assert (
        brokers["broker-a"]["read_queue_nums"],
        brokers["broker-a"]["write_queue_nums"],
        brokers["broker-a"]["perm"],
    ) == (4, 4, 6)
    assert (
        brokers["broker-b"]["read_queue_nums"],
        brokers["broker-b"]["write_queue_nums"],
        brokers["broker-b"]["perm"],
    ) == (2, 1, 4)
    route = console_admin.examine_topic_route_info(topic_name)
    assert {(q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm) for q in route.queue_datas} == {
        ("broker-a", 4, 4, 6),
        ("broker-b", 2, 1, 4),
    }


def test_create_in_broker_mode_on_one_broker_only(operator, console_cluster, topic_name) -> None:
    response = operator.post(URL, {"name": topic_name, "brokers": {"broker-b": {}}}, format="json")
    assert response.status_code == 201, response.content
    assert list(response.json()["brokers"]) == ["broker-b"]


def test_list_search_type_filter_ordering_and_pagination(operator, viewer, console_cluster, topic_name) -> None:
    create(operator, console_cluster, topic_name + "_x")
    create(operator, console_cluster, topic_name + "_y")
    response = viewer.get(URL, {"search": topic_name.lower(), "ordering": "-name"})
    assert response.status_code == 200
    page = response.json()
    assert page["count"] == 2
    assert [t["name"] for t in page["results"]] == [topic_name + "_y", topic_name + "_x"]
    assert page["results"][0]["brokers"]["broker-a"]["read_queue_nums"] == 8

    response = viewer.get(URL, {"search": topic_name, "page_size": 1, "page": 2})
    assert response.json()["results"][0]["name"] == topic_name + "_y"
    assert response.json()["previous"] is not None

    system = viewer.get(URL, {"type": "system", "page_size": 1000}).json()["results"]
    names = {t["name"] for t in system}
    assert {"SCHEDULE_TOPIC_XXXX", "broker-a", console_cluster.cluster} <= names
    assert all(t["type"] == "system" for t in system)
    normal = viewer.get(URL, {"type": "normal", "page_size": 1000}).json()["results"]
    assert topic_name + "_x" in {t["name"] for t in normal} and not names & {t["name"] for t in normal}


def test_list_knows_retry_and_dlq_topics(operator, viewer, console_cluster, console_admin, topic_name) -> None:
    from brokers.engine.common.topic_config import TopicConfig

    group = topic_name.replace("T_", "G_")
    for prefix in ("%RETRY%", "%DLQ%"):  # what brokers make for consumer groups
        console_admin.create_or_update_topic(
            console_cluster.broker_addr("broker-a"), TopicConfig(prefix + group, 1, 1, 6)
        )
    retry = viewer.get(URL, {"type": "retry", "search": group}).json()["results"]
    dlq = viewer.get(URL, {"type": "dlq", "search": group}).json()["results"]
    assert [t["name"] for t in retry] == ["%RETRY%" + group]
    assert [t["name"] for t in dlq] == ["%DLQ%" + group]
    both = viewer.get(URL, {"type": "retry,dlq", "search": group}).json()
    assert both["count"] == 2
    detail = viewer.get(f"{URL}/%25RETRY%25{group}")
    assert detail.status_code == 200 and detail.json()["type"] == "retry"


def test_retrieve_status_route_and_consumer_groups(operator, viewer, console_cluster, topic_name) -> None:
    create(operator, console_cluster, topic_name, read_queue_nums=2, write_queue_nums=2)
    sent = operator.post(
        f"{URL}/{topic_name}/messages",
        {"body": "hello", "tags": "t1", "keys": "k1", "broker": "broker-b"},
        format="json",
    )
    assert sent.status_code == 201, sent.content
    assert sent.json()["broker_name"] == "broker-b" and sent.json()["status"] == "SEND_OK"

    detail = viewer.get(f"{URL}/{topic_name}").json()
    assert (
        detail["brokers"]["broker-b"]["write_queue_nums"] == 2 and detail["brokers"]["broker-b"]["perm_string"] == "RW-"
    )

    status = viewer.get(f"{URL}/{topic_name}/status").json()
    assert status["total_messages"] == 1 and len(status["queues"]) == 4
    queue = next(q for q in status["queues"] if q["max_offset"] == 1)
    assert queue["broker_name"] == "broker-b" and queue["min_offset"] == 0 and queue["last_update_timestamp"] > 0
    assert queue["last_update"] is not None

    route = viewer.get(f"{URL}/{topic_name}/route").json()
    assert {b["broker_name"]: b["addrs"]["0"] for b in route["brokers"]} == {
        n: console_cluster.broker_addr(n) for n in ("broker-a", "broker-b")
    }

    group = topic_name.replace("T_", "G_")
    with PullClient(console_cluster.namesrv_addr, group, heartbeat_interval_s=None) as consumer:
        consumer.update_offset(MessageQueue(topic_name, "broker-b", 0), 1)
    groups = viewer.get(f"{URL}/{topic_name}/consumer-groups").json()
    lag = (
        0 if (queue["broker_name"], queue["queue_id"]) == ("broker-b", 0) else 1
    )  # the one message, unless its queue is the committed one
    assert groups == {
        "name": topic_name,
        "groups": [group],
        "errors": [],
        "rows": [{"group": group, "members": 0, "lag": lag, "tps": 0.0, "error": ""}],
    }
    assert AuditEntry.objects.filter(action="topic.send_test_message", target=topic_name, result="ok").count() == 1


def test_put_replaces_in_cluster_mode(operator, console_cluster, topic_name) -> None:
    create(operator, console_cluster, topic_name, read_queue_nums=2, write_queue_nums=2, perm=4)
    response = operator.put(
        f"{URL}/{topic_name}", {"cluster": console_cluster.cluster, "read_queue_nums": 16}, format="json"
    )
    assert response.status_code == 200, response.content
    for broker in response.json()["brokers"].values():
        assert (broker["read_queue_nums"], broker["write_queue_nums"], broker["perm"]) == (
            16,
            8,
            6,
        )  # the rest: defaults
    entry = AuditEntry.objects.get(action="topic.update", target=topic_name)
    assert entry.before["broker-a"]["perm"] == 4 and entry.after["broker-a"]["read_queue_nums"] == 16


def test_patch_changes_only_what_is_given(operator, console_cluster, topic_name) -> None:
    create(operator, console_cluster, topic_name, read_queue_nums=3, write_queue_nums=3)
    response = operator.patch(f"{URL}/{topic_name}", {"perm": 4}, format="json")
    assert response.status_code == 200, response.content
    assert {(b["read_queue_nums"], b["write_queue_nums"], b["perm"]) for b in response.json()["brokers"].values()} == {
        (3, 3, 4)
    }
    response = operator.patch(f"{URL}/{topic_name}", {"brokers": {"broker-a": {"write_queue_nums": 5}}}, format="json")
    brokers = response.json()["brokers"]
    assert (brokers["broker-a"]["write_queue_nums"], brokers["broker-b"]["write_queue_nums"]) == (5, 3)


def test_patch_in_broker_mode_adds_a_broker(operator, console_cluster, topic_name) -> None:
    operator.post(URL, {"name": topic_name, "brokers": {"broker-a": {}}}, format="json")
    response = operator.patch(
        f"{URL}/{topic_name}", {"brokers": {"broker-b": {"read_queue_nums": 2, "write_queue_nums": 2}}}, format="json"
    )
    assert response.status_code == 200, response.content
    assert set(response.json()["brokers"]) == {"broker-a", "broker-b"}


def test_delete_everywhere(operator, console_cluster, topic_name, console_admin) -> None:
    create(operator, console_cluster, topic_name)
    response = operator.delete(f"{URL}/{topic_name}")
    assert response.status_code == 200
    assert response.json() == {"name": topic_name, "brokers": ["broker-a", "broker-b"], "scope": "all", "remaining": []}
    assert operator.get(f"{URL}/{topic_name}").status_code == 404
    assert all(topic_name not in t for t in tables(console_admin, console_cluster).values())
    assert AuditEntry.objects.get(action="topic.delete", target=topic_name).after == {}


def test_delete_from_one_broker_keeps_the_route_of_the_others(
    operator, console_cluster, topic_name, console_admin
) -> None:
    create(operator, console_cluster, topic_name, read_queue_nums=3, write_queue_nums=3)
    response = operator.delete(f"{URL}/{topic_name}", QUERY_STRING="broker=broker-a")
    assert response.status_code == 200, response.content
    assert response.json()["remaining"] == ["broker-b"]
    detail = operator.get(f"{URL}/{topic_name}").json()
    assert list(detail["brokers"]) == ["broker-b"] and detail["brokers"]["broker-b"]["read_queue_nums"] == 3
    assert topic_name not in console_admin.get_all_topic_config(console_cluster.broker_addr("broker-a"))
    assert topic_name in console_admin.get_all_topic_config(console_cluster.broker_addr("broker-b"))


def test_delete_from_a_cluster(operator, console_cluster, topic_name) -> None:
    create(operator, console_cluster, topic_name)
    response = operator.delete(f"{URL}/{topic_name}?cluster={console_cluster.cluster}")
    assert response.status_code == 200, response.content
    assert response.json()["scope"] == f"cluster:{console_cluster.cluster}"
    assert operator.get(f"{URL}/{topic_name}").status_code == 404


# -- bad input: 400 with the field, nothing changed ----------------------------------------------------

BAD_NAMES = [
    ("", "empty"),
    ("a b", "a space"),
    (" lead", "a space"),
    ("a..b", "'.'"),
    ("a/b", "'/'"),
    ("../etc", "'.'"),
    ("a\x00b", "null"),
    ("abc\n", "newline"),
    ("１２３", "U+FF11"),
    ("ünicode", "U+00FC"),
    ("Topic\u200b", "U+200B"),
    ("x" * 128, "at most 127"),
    ("TBW102", "system topic"),
    ("SCHEDULE_TOPIC_XXXX", "system topic"),
    ("CHECKPOINT_TOPIC", "system topic"),
    ("GantryTestCluster_REPLY_TOPIC", "system topic"),
]


@pytest.mark.parametrize(("name", "reason"), BAD_NAMES)
def test_create_refuses_a_bad_name(operator, console_cluster, console_admin, name, reason) -> None:
    before = tables(console_admin, console_cluster)
    response = operator.post(URL, {"name": name, "cluster": console_cluster.cluster}, format="json")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid" and list(body["fields"]) == ["name"]
    assert reason.lower() in body["fields"]["name"][0].lower()
    assert tables(console_admin, console_cluster) == before


@pytest.mark.parametrize("value", [123, None, ["a"], {"a": 1}, True])
def test_create_refuses_a_name_of_the_wrong_type(operator, console_cluster, value) -> None:
    response = operator.post(URL, {"name": value, "cluster": console_cluster.cluster}, format="json")
    assert response.status_code == 400 and "name" in response.json()["fields"]


@pytest.mark.parametrize("field", ["read_queue_nums", "write_queue_nums"])
@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (1025, "from 0 to 1024"),
        (-1, "from 0 to 1024"),
        ("8", "integer"),
        (8.5, "integer"),
        (8.0, "integer"),
        (True, "integer"),
        (None, "null"),
    ],
)
def test_create_refuses_bad_queue_counts(
    operator, console_cluster, console_admin, topic_name, field, value, reason
) -> None:
    before = tables(console_admin, console_cluster)
    response = operator.post(URL, {"name": topic_name, "cluster": console_cluster.cluster, field: value}, format="json")
    assert response.status_code == 400, response.content
    assert reason in response.json()["fields"][field][0]
    response = operator.post(URL, {"name": topic_name, "brokers": {"broker-a": {field: value}}}, format="json")
    assert response.status_code == 400
    assert reason in response.json()["fields"][f"brokers.broker-a.{field}"][0]
    assert tables(console_admin, console_cluster) == before


@pytest.mark.parametrize("value", [-1, 8, 100, "6", 6.5])
def test_create_refuses_perm_outside_0_to_7(operator, console_cluster, topic_name, value) -> None:
    response = operator.post(
        URL, {"name": topic_name, "cluster": console_cluster.cluster, "perm": value}, format="json"
    )
    assert response.status_code == 400 and "perm" in response.json()["fields"]


def test_create_refuses_an_unknown_cluster_or_broker(operator, console_cluster, console_admin, topic_name) -> None:
    before = tables(console_admin, console_cluster)
    response = operator.post(URL, {"name": topic_name, "cluster": "NoSuchCluster"}, format="json")
    assert response.status_code == 400
    assert "unknown cluster 'NoSuchCluster'" in response.json()["fields"]["cluster"][0]
    response = operator.post(URL, {"name": topic_name, "brokers": {"broker-a": {}, "broker-zz": {}}}, format="json")
    assert response.status_code == 400
    assert "unknown broker 'broker-zz'" in response.json()["fields"]["brokers.broker-zz"][0]
    assert tables(console_admin, console_cluster) == before  # broker-a was not written either
    failed = AuditEntry.objects.filter(action="topic.create", target=topic_name, result="failed")
    assert failed.count() == 2 and "unknown" in failed.first().reason


@pytest.mark.parametrize(
    "body",
    [
        {"cluster": "C"},  # no name
        {"name": "Ok"},  # neither cluster nor brokers
        {"name": "Ok", "cluster": "C", "brokers": {"broker-a": {}}},  # both
        {"name": "Ok", "brokers": {}},  # empty brokers
        {"name": "Ok", "brokers": ["broker-a"]},  # wrong type
        {"name": "Ok", "brokers": {"broker-a": 8}},
        {"name": "Ok", "cluster": 5},
    ],
)
def test_create_refuses_malformed_bodies(operator, console_cluster, body) -> None:
    response = operator.post(URL, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["fields"]


def test_unknown_fields_are_named(operator, console_cluster, topic_name) -> None:
    response = operator.post(
        URL, {"name": topic_name, "cluster": console_cluster.cluster, "readQueueNums": 4, "brokers_": 1}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {"readQueueNums": ["unknown field."], "brokers_": ["unknown field."]}
    response = operator.post(URL, {"name": topic_name, "brokers": {"broker-a": {"queues": 4}}}, format="json")
    assert response.json()["fields"] == {"brokers.broker-a.queues": ["unknown field."]}


def test_a_body_that_is_not_an_object_or_not_json(operator, console_cluster) -> None:
    assert operator.post(URL, ["x"], format="json").status_code == 400
    response = operator.generic("POST", URL, "{not json", content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "parse_error"
    response = operator.generic("POST", URL, "name=x", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415


def test_an_oversize_body_gets_413(operator, console_cluster, console_admin, settings) -> None:
    before = tables(console_admin, console_cluster)
    body = '{"name": "Big", "cluster": "%s", "pad": "%s"}' % (
        console_cluster.cluster,
        "x" * (settings.MAX_BODY_BYTES + 1),
    )
    response = operator.generic("POST", URL, body, content_type="application/json")
    assert response.status_code == 413
    assert response.json()["code"] == "too_large"
    assert tables(console_admin, console_cluster) == before


def test_create_of_an_existing_topic_is_409(operator, console_cluster, topic_name) -> None:
    create(operator, console_cluster, topic_name)
    response = operator.post(URL, {"name": topic_name, "cluster": console_cluster.cluster}, format="json")
    assert response.status_code == 409 and "exists already" in response.json()["detail"]


def test_unknown_topics_are_404(operator, console_cluster) -> None:
    name = "NoSuchTopic_404"
    for method, path, body in [
        ("get", "", None),
        ("put", "", {"cluster": console_cluster.cluster}),
        ("patch", "", {"perm": 6}),
        ("delete", "", None),
        ("get", "/status", None),
        ("get", "/route", None),
        ("get", "/consumer-groups", None),
        ("post", "/messages", {"body": "x"}),
    ]:
        response = getattr(operator, method)(f"{URL}/{name}{path}", body, format="json")
        assert response.status_code == 404, (method, path, response.content)
        assert response.json()["code"] == "not_found"


def test_update_refusals(operator, console_cluster, console_admin, topic_name) -> None:
    create(operator, console_cluster, topic_name)
    before = tables(console_admin, console_cluster)
    cases = [
        ("put", {"name": "Other"}, "name"),
        ("put", {"read_queue_nums": 4}, "cluster"),
        ("patch", {}, "non_field_errors"),
        ("patch", {"read_queue_nums": -1}, "read_queue_nums"),
        ("patch", {"brokers": {"nope": {"perm": 6}}}, "brokers.nope"),
        ("patch", {"cluster": "nope"}, "cluster"),
    ]
    for method, body, field in cases:
        response = getattr(operator, method)(f"{URL}/{topic_name}", body, format="json")
        assert response.status_code == 400, (body, response.content)
        assert field in response.json()["fields"], (body, response.json())
    assert tables(console_admin, console_cluster) == before


def test_delete_refusals(operator, console_cluster, topic_name, console_admin) -> None:
    operator.post(URL, {"name": topic_name, "brokers": {"broker-a": {}}}, format="json")
    before = tables(console_admin, console_cluster)
    for query, field in [
        ("broker=nope", "broker"),
        ("broker=broker-b", "broker"),
        ("cluster=nope", "cluster"),
        ("cluster=x&broker=y", "broker"),
        ("color=red", "color"),
    ]:
        response = operator.delete(f"{URL}/{topic_name}?{query}")
        assert response.status_code == 400, (query, response.content)
        assert field in response.json()["fields"]
    response = operator.delete(f"{URL}/SCHEDULE_TOPIC_XXXX")
    assert response.status_code == 400 and "system topic" in response.json()["detail"]
    assert tables(console_admin, console_cluster) == before


def test_test_message_refusals(operator, console_cluster, topic_name) -> None:
    create(operator, console_cluster, topic_name)
    for body, field in [
        ({}, "body"),
        ({"body": ""}, "body"),
        ({"body": 5}, "body"),
        ({"body": "x", "broker": "nope"}, "broker"),
        ({"body": "x", "extra": 1}, "extra"),
    ]:
        response = operator.post(f"{URL}/{topic_name}/messages", body, format="json")
        assert response.status_code == 400, (body, response.content)
        assert field in response.json()["fields"]


def test_list_refuses_an_unknown_type_or_ordering(viewer, console_cluster) -> None:
    assert viewer.get(URL, {"type": "weird"}).json()["fields"]["type"]
    assert viewer.get(URL, {"ordering": "size"}).json()["fields"]["ordering"]


# -- who may ----------------------------------------------------------------------------------------


def test_no_credentials_is_401(api_client_as, console_cluster) -> None:
    anonymous = api_client_as(None)
    response = anonymous.get(URL)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert anonymous.post(URL, {"name": "X", "cluster": console_cluster.cluster}, format="json").status_code == 401


def test_a_bad_token_is_401(api_client_as, console_cluster) -> None:
    client = api_client_as(None)
    client.credentials(HTTP_AUTHORIZATION="Token gty_not-a-real-token")
    assert client.get(URL).status_code == 401


def test_viewer_reads_but_may_not_change(viewer, operator, console_cluster, console_admin, topic_name) -> None:
    create(operator, console_cluster, topic_name)
    before = tables(console_admin, console_cluster)
    assert viewer.get(f"{URL}/{topic_name}").status_code == 200
    for method, path, body in [
        ("post", "", {"name": topic_name + "2", "cluster": console_cluster.cluster}),
        ("put", f"/{topic_name}", {"cluster": console_cluster.cluster}),
        ("patch", f"/{topic_name}", {"perm": 4}),
        ("delete", f"/{topic_name}", None),
        ("post", f"/{topic_name}/messages", {"body": "x"}),
    ]:
        response = getattr(viewer, method)(f"{URL}{path}", body, format="json")
        assert response.status_code == 403, (method, path)
        assert "operator" in response.json()["detail"]
    assert tables(console_admin, console_cluster) == before


# -- the cluster down -----------------------------------------------------------------------------


def test_name_server_unreachable_is_503(operator, mq_settings, unused_addr) -> None:
    mq_settings(unused_addr)
    for response in (
        operator.get(URL),
        operator.get(f"{URL}/Any"),
        operator.post(URL, {"name": "Any", "cluster": "C"}, format="json"),
    ):
        assert response.status_code == 503, response.content
        assert response.json()["code"] == "namesrv_unreachable"
        assert "name server unreachable" in response.json()["detail"] and unused_addr in response.json()["detail"]

"""Several clusters in one console: two real tiers (the session cluster as ``default``, a second one added
as a name-server set) with different topics; ``?namesrv_set=`` scopes every API call and console page, the
console session keeps the choice, unknown names are refused, and only admins change the list (audited,
bad addresses refused with the field named, secrets never shown back)."""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.models import NamesrvSet
from console.models import AuditEntry
from tests.brokers.engine.client._cluster import create_topic

pytestmark = pytest.mark.django_db

SECRET = "second-tier-secret-1"


@pytest.fixture
def two_tiers(console_cluster, second_session_cluster, topic_name):
    """A topic on each tier (``<name>_A`` on default, ``<name>_B`` on the second)."""
    a, b = f"{topic_name}_A", f"{topic_name}_B"
    with BlockingMQAdminClient(console_cluster.namesrv_addr) as admin:
        create_topic(admin, console_cluster, a, queues=2)
    with BlockingMQAdminClient(second_session_cluster.namesrv_addr) as admin:
        create_topic(admin, second_session_cluster, b, queues=2)
    return a, b


@pytest.fixture
def admin_api(api_client_as):
    return api_client_as("admin")


def _add_second(admin_api, second_session_cluster, name: str = "second") -> dict:
    made = admin_api.post(
        "/api/v1/namesrv-sets", {"name": name, "namesrv_addr": second_session_cluster.namesrv_addr}, format="json"
    )
    assert made.status_code == 201, made.content
    return made.json()


def _topic_names(client, query: str = "") -> set[str]:
    answer = client.get(f"/api/v1/topics?page_size=500{query}")
    assert answer.status_code == 200, answer.content
    return {row["name"] for row in answer.json()["results"]}


def test_the_api_lists_each_tiers_own_topics(two_tiers, admin_api, viewer, second_session_cluster) -> None:
    a, b = two_tiers
    _add_second(admin_api, second_session_cluster)
    on_default, on_second = _topic_names(viewer), _topic_names(viewer, "&namesrv_set=second")
    assert a in on_default and b not in on_default
    assert b in on_second and a not in on_second
    assert _topic_names(viewer, "&namesrv_set=default") == on_default
    route = viewer.get(f"/api/v1/topics/{b}/route?namesrv_set=second")
    assert route.status_code == 200 and {(r["broker_name"], r["cluster"]) for r in route.json()["brokers"]} == {
        ("broker-a", "SecondCluster")
    }
    assert viewer.get(f"/api/v1/topics/{b}").status_code == 404  # not on default
    clusters = viewer.get("/api/v1/clusters?namesrv_set=second").json()
    assert "SecondCluster" in str(clusters) and "SecondCluster" not in str(viewer.get("/api/v1/clusters").json())


def test_an_unknown_set_is_refused_naming_the_parameter(console_cluster, viewer, viewer_client) -> None:
    answer = viewer.get("/api/v1/topics?namesrv_set=nowhere")
    assert answer.status_code == 400
    assert "namesrv_set" in answer.json()["fields"] and "nowhere" in answer.json()["detail"]
    page = viewer_client.get("/topics/?namesrv_set=nowhere")
    assert (
        page.status_code == 400 and b"no name-server set is called" in page.content and b"Traceback" not in page.content
    )


def test_the_console_session_keeps_the_chosen_set(two_tiers, admin_api, viewer_client, second_session_cluster) -> None:
    a, b = two_tiers
    _add_second(admin_api, second_session_cluster)
    assert a.encode() in viewer_client.get("/topics/?q=" + a[:-2]).content
    switched = viewer_client.get("/topics/?namesrv_set=second&q=" + b[:-2])
    assert switched.status_code == 200 and b.encode() in switched.content and a.encode() not in switched.content
    assert b'<option value="second" selected>' in switched.content  # the header's switcher shows the choice
    later = viewer_client.get("/topics/?q=" + b[:-2])  # no parameter: the session's choice
    assert b.encode() in later.content and a.encode() not in later.content
    NamesrvSet.objects.filter(name="second").delete()  # removed since: back to default
    assert a.encode() in viewer_client.get("/topics/?q=" + a[:-2]).content


def test_only_admins_change_the_sets_and_secrets_never_come_back(
    console_cluster, admin_api, api_client_as, second_session_cluster
) -> None:
    for role in ("viewer", "operator"):
        refused = api_client_as(role).post(
            "/api/v1/namesrv-sets", {"name": "x", "namesrv_addr": "127.0.0.1:9876"}, format="json"
        )
        assert refused.status_code == 403
    bad = admin_api.post("/api/v1/namesrv-sets", {"name": "bad", "namesrv_addr": "127.0.0.1:99999"}, format="json")
    assert bad.status_code == 400 and "namesrv_addr" in bad.json()["fields"]
    comma = admin_api.post("/api/v1/namesrv-sets", {"name": "bad", "namesrv_addr": "a:1,b:2"}, format="json")
    assert comma.status_code == 400 and "namesrv_addr" in comma.json()["fields"]
    reserved = admin_api.post(
        "/api/v1/namesrv-sets", {"name": "default", "namesrv_addr": "127.0.0.1:9876"}, format="json"
    )
    assert reserved.status_code == 400 and "name" in reserved.json()["fields"]
    half = admin_api.post(
        "/api/v1/namesrv-sets", {"name": "half", "namesrv_addr": "127.0.0.1:9876", "access_key": "ak"}, format="json"
    )
    assert half.status_code == 400 and "secret_key" in half.json()["fields"]
    assert not NamesrvSet.objects.exists()

    made = admin_api.post(
        "/api/v1/namesrv-sets",
        {
            "name": "second",
            "namesrv_addr": f" {second_session_cluster.namesrv_addr} ;",
            "access_key": "RocketMQ2",
            "secret_key": SECRET,
            "position": 3,
        },
        format="json",
    )
    assert made.status_code == 201 and made.json()["has_secret_key"] is True
    assert made.json()["namesrv_addr"] == second_session_cluster.namesrv_addr  # normalised
    listed = admin_api.get("/api/v1/namesrv-sets")
    assert [s["name"] for s in listed.json()["results"]] == ["default", "second"] and listed.json()["results"][0][
        "default"
    ] is True
    edited = admin_api.put(
        "/api/v1/namesrv-sets/second",
        {"namesrv_addr": second_session_cluster.namesrv_addr, "access_key": "RocketMQ2", "position": 1},
        format="json",
    )
    assert edited.status_code == 200 and edited.json()["has_secret_key"] is True  # empty secret: kept
    assert NamesrvSet.objects.get(name="second").secret_key == SECRET
    assert (
        admin_api.put("/api/v1/namesrv-sets/default", {"namesrv_addr": "127.0.0.1:1"}, format="json").status_code == 400
    )
    for body in (made.content, listed.content, edited.content, admin_api.get("/api/v1/namesrv-sets/second").content):
        assert SECRET.encode() not in body
    assert admin_api.delete("/api/v1/namesrv-sets/second").status_code == 204
    assert admin_api.delete("/api/v1/namesrv-sets/second").status_code == 404
    actions = list(AuditEntry.objects.filter(target_type="namesrv_set").values_list("action", "result"))
    assert (
        ("namesrv_set.create", "ok") in actions
        and ("namesrv_set.update", "ok") in actions
        and ("namesrv_set.delete", "ok") in actions
    )
    assert ("namesrv_set.create", "failed") in actions  # the refusals are audited too
    assert SECRET not in str(list(AuditEntry.objects.values_list("before", "after")))


def test_the_admin_page_adds_and_removes_a_set(console_cluster, as_role, second_session_cluster) -> None:
    assert as_role("operator").get("/namesrv-sets/").status_code == 403
    admin = as_role("admin")
    bad = admin.post(
        "/namesrv-sets/save", {"mode": "create", "name": "second", "namesrv_addr": "nowhere", "position": 0}
    )
    assert bad.status_code == 400 and b'data-field="namesrv_addr"' in bad.content and not NamesrvSet.objects.exists()
    added = admin.post(
        "/namesrv-sets/save",
        {
            "mode": "create",
            "name": "second",
            "namesrv_addr": second_session_cluster.namesrv_addr,
            "access_key": "ak2",
            "secret_key": SECRET,
            "position": 0,
        },
    )
    assert added.status_code == 302
    page = admin.get("/namesrv-sets/")
    assert (
        b"second" in page.content
        and SECRET.encode() not in page.content
        and b'data-testid="namesrv-switcher"' in page.content
    )
    assert admin.post("/namesrv-sets/second/delete").status_code == 302 and not NamesrvSet.objects.exists()

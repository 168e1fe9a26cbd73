"""/api/v1/subscription-groups against a real cluster: create per cluster and per broker, PATCH and PUT,
delete (a part, with offsets), the list's per-broker state; refusals name the field and change nothing
(each broker's GET_ALL_SUBSCRIPTIONGROUP_CONFIG compared before and after); writes are audited and need
the operator role. mqadmin updateSubGroup / deleteSubGroup write through the same broker requests.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from brokers.engine.client.admin_subscription_groups import get_all_subscription_group_config
from console.models import AuditEntry

pytestmark = pytest.mark.django_db

URL = "/api/v1/subscription-groups"


def tables(admin, cluster) -> dict:
    """Every broker's subscription group table: what must not change when input is refused."""
    return {
        name: admin.driver.run(get_all_subscription_group_config(cluster.broker_addr(name)))
        for name in cluster.broker_names
    }


def brokers_of(body: dict) -> dict[str, dict]:
    return {b["broker_name"]: b for b in body["brokers"]}


def test_create_edit_and_delete_per_cluster_and_broker(operator, console_cluster, console_admin, group) -> None:
    created = operator.post(
        URL, {"name": group, "cluster": console_cluster.cluster, "retry_max_times": 3}, format="json"
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["name"] == group and body["consume_enable"] is True and body["uniform"] is True
    assert set(brokers_of(body)) == {"broker-a", "broker-b"}
    assert {b["retry_max_times"] for b in body["brokers"]} == {3}
    assert operator.post(URL, {"name": group, "broker": "broker-a"}, format="json").status_code == 409  # exists already

    patched = operator.patch(f"{URL}/{group}", {"consume_enable": False, "broker": "broker-b"}, format="json")
    assert patched.status_code == 200, patched.content
    state = brokers_of(patched.json())
    assert (
        state["broker-b"]["consume_enable"] is False and state["broker-b"]["retry_max_times"] == 3
    )  # PATCH keeps the rest
    assert (
        state["broker-a"]["consume_enable"] is True
        and patched.json()["consume_enable"] is False
        and not patched.json()["uniform"]
    )
    on_b = tables(console_admin, console_cluster)["broker-b"][group]
    assert (on_b.consume_enable, on_b.retry_max_times) == (False, 3)  # the broker holds it

    replaced = operator.put(
        f"{URL}/{group}",
        {
            "retry_queue_nums": 2,
            "broker_id": 1,
            "which_broker_when_consume_slowly": 0,
            "consume_broadcast_enable": False,
            "notify_consumer_ids_changed_enable": False,
        },
        format="json",
    )
    assert replaced.status_code == 200, replaced.content
    for b in replaced.json()["brokers"]:  # PUT: every broker that holds it; left-out settings back to the defaults
        assert (
            b["retry_queue_nums"],
            b["broker_id"],
            b["which_broker_when_consume_slowly"],
            b["retry_max_times"],
            b["consume_enable"],
            b["consume_broadcast_enable"],
            b["notify_consumer_ids_changed_enable"],
        ) == (2, 1, 0, 16, True, False, False)

    listed = operator.get(URL, {"search": group}).json()
    assert [g["name"] for g in listed["results"]] == [group]
    assert operator.get(f"{URL}/{group}").json()["brokers"] == replaced.json()["brokers"]

    gone = operator.delete(f"{URL}/{group}?broker=broker-a&remove_offsets=true")
    assert gone.status_code == 200, gone.content
    assert gone.json() == {"name": group, "brokers": ["broker-a"], "remove_offsets": True, "remaining": ["broker-b"]}
    assert group not in tables(console_admin, console_cluster)["broker-a"]
    assert operator.delete(f"{URL}/{group}").json()["brokers"] == ["broker-b"]
    assert operator.get(f"{URL}/{group}").status_code == 404

    actions = list(AuditEntry.objects.filter(target=group).order_by("id").values_list("action", "result"))
    assert actions == [
        ("subscription_group.create", "ok"),
        ("subscription_group.create", "failed"),
        ("subscription_group.update", "ok"),
        ("subscription_group.update", "ok"),
        ("subscription_group.delete", "ok"),
        ("subscription_group.delete", "ok"),
    ]
    entry = AuditEntry.objects.filter(action="subscription_group.update", target=group).order_by("id").first()
    assert entry.actor == "api-operator" and entry.before["broker-b"]["consume_enable"] is True
    assert entry.after["broker-b"]["consume_enable"] is False


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("post", "", {"name": "bad name!", "cluster": "DefaultCluster"}, "name"),
        ("post", "", {"name": "TOOLS_CONSUMER", "cluster": "DefaultCluster"}, "name"),
        ("post", "", {"name": "{group}", "cluster": "NoSuchCluster"}, "cluster"),
        ("post", "", {"name": "{group}", "broker": "broker-zz"}, "broker"),
        ("post", "", {"name": "{group}"}, "cluster"),
        ("post", "", {"name": "{group}", "cluster": "DefaultCluster", "broker": "broker-a"}, "broker"),
        ("post", "", {"name": "{group}", "cluster": "DefaultCluster", "retry_queue_nums": 2000}, "retry_queue_nums"),
        ("post", "", {"name": "{group}", "cluster": "DefaultCluster", "retry_max_times": -2}, "retry_max_times"),
        ("post", "", {"name": "{group}", "cluster": "DefaultCluster", "broker_id": -1}, "broker_id"),
        ("post", "", {"name": "{group}", "cluster": "DefaultCluster", "consume_enable": "no"}, "consume_enable"),
        ("post", "", {"name": "{group}", "cluster": "DefaultCluster", "retryMaxTimes": 1}, "retryMaxTimes"),
        ("patch", "/{existing}", {"which_broker_when_consume_slowly": "1"}, "which_broker_when_consume_slowly"),
        ("patch", "/{existing}", {"broker": "broker-zz", "consume_enable": False}, "broker"),
        ("put", "/{existing}", {"cluster": "NoSuchCluster"}, "cluster"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_changes_nothing(
    operator, console_cluster, console_admin, group, method, path, body, field
) -> None:
    existing = f"{group}_x"
    assert operator.post(URL, {"name": existing, "cluster": console_cluster.cluster}, format="json").status_code == 201
    body = {k: (v.format(group=group) if isinstance(v, str) else v) for k, v in body.items()}
    if "cluster" in body and body["cluster"] == "DefaultCluster":
        body["cluster"] = console_cluster.cluster
    before = tables(console_admin, console_cluster)
    response = getattr(operator, method)(URL + path.format(existing=existing), body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"], response.json()
    assert tables(console_admin, console_cluster) == before


def test_system_groups_and_unknown_groups(operator, console_cluster) -> None:
    assert operator.patch(f"{URL}/TOOLS_CONSUMER", {"consume_enable": False}, format="json").json()[
        "fields"
    ].keys() == {"name"}
    assert operator.delete(f"{URL}/TOOLS_CONSUMER").status_code == 400
    assert operator.get(f"{URL}/NoSuchGroup_sg").status_code == 404
    assert operator.delete(f"{URL}/NoSuchGroup_sg").status_code == 404
    listed = operator.get(URL, {"kind": "system"}).json()["results"]
    assert "TOOLS_CONSUMER" in {g["name"] for g in listed}


def test_writes_need_the_operator_role(viewer, console_cluster, group) -> None:
    assert viewer.get(URL).status_code == 200
    assert viewer.post(URL, {"name": group, "cluster": console_cluster.cluster}, format="json").status_code == 403
    assert viewer.delete(f"{URL}/{group}").status_code == 403
    assert not AuditEntry.objects.filter(target=group, result="ok").exists()


def mqadmin(cluster, *args: str) -> str:
    out = io.StringIO()
    call_command("mqadmin", *args, "-n", cluster.namesrv_addr, stdout=out)
    return out.getvalue()


def test_mqadmin_update_and_delete_sub_group(console_cluster, console_admin, group) -> None:
    out = mqadmin(
        console_cluster,
        "updateSubGroup",
        "-c",
        console_cluster.cluster,
        "-g",
        group,
        "--consumeEnable",
        "false",
        "-r",
        "5",
        "-q",
        "2",
    )
    assert out.count("create subscription group to ") == 2 and '"retryMaxTimes":5' in out
    for name in console_cluster.broker_names:
        cfg = tables(console_admin, console_cluster)[name][group]
        assert (cfg.consume_enable, cfg.retry_max_times, cfg.retry_queue_nums) == (False, 5, 2)
    with pytest.raises(CommandError, match="retryMaxTimes"):
        mqadmin(
            console_cluster, "updateSubGroup", "-b", console_cluster.broker_addr("broker-a"), "-g", group, "-r", "-5"
        )
    out = mqadmin(console_cluster, "deleteSubGroup", "-b", console_cluster.broker_addr("broker-a"), "-g", group, "-r")
    assert f"delete subscription group [{group}] from broker [{console_cluster.broker_addr('broker-a')}]" in out
    left = tables(console_admin, console_cluster)
    assert group not in left["broker-a"] and group in left["broker-b"]
    mqadmin(console_cluster, "deleteSubGroup", "-c", console_cluster.cluster, "-g", group)
    assert group not in tables(console_admin, console_cluster)["broker-b"]

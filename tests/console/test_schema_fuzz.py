"""Fuzz /api/v1 from its own OpenAPI schema (schemathesis) as an admin, in process through Django's WSGI app.

Every operation gets FUZZ_EXAMPLES derandomized schema-valid requests against a cluster of this module's
own that holds the things the schema's examples name (topic ``TopicTest``, group
``please_rename_unique_group_name`` with a live member and committed offsets, broker ``broker-a``,
cluster ``DefaultCluster``) and a private Redis with no Celery worker, so jobs the fuzz starts stay
queued. The schema gives formats, not existence: where a generated path parameter, query parameter or
body field names something that must exist, the fuzz puts in a thing the fixture holds (a throwaway one
for a DELETE). Every answer must be below 500 and match the schema (status documented, body of the
documented shape). The measurement: per operation, the share of requests refused with a 4xx; fewer than
a tenth of the operations may refuse most (more than half) of what the schema calls valid.
Everything runs in the test's database transaction, rolled back at the end.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from contextlib import contextmanager

import pytest

from console.schema_examples import EXAMPLE_BROKER, EXAMPLE_CLUSTER, EXAMPLE_GROUP, EXAMPLE_TOPIC
from tests.fixtures.console import PASSWORD
from tests.fixtures.waiting import wait_until

pytestmark = pytest.mark.django_db

FUZZ_EXAMPLES = 12  # generated requests per operation
LOGIN = ("fuzz-login", "fuzz-login-password-1")  # a user POST auth/token may log in as

# Values that name something which must exist, put into the query or body wherever the generated request
# has that field (the schema gives their format and an example; existence is the fixture's): field -> value.
EXISTING_FIELDS = {
    "topic": EXAMPLE_TOPIC,
    "group": EXAMPLE_GROUP,
    "cluster": EXAMPLE_CLUSTER,
    "broker": EXAMPLE_BROKER,
    # alert webhooks: a loopback port nobody listens on (allowed by fuzz_cluster; no scan runs, nothing is sent)
    "webhook_url": "http://127.0.0.1:9/gantry-fuzz",
}
EXISTING_QUERY = {"page": 1}  # a page that exists (a later one is a 404)
# ... and per operation, for fields whose meaning differs between operations
EXISTING_BODY = {
    "POST /api/v1/tokens": {"username": "fuzz-target"},
    "POST /api/v1/auth/token": {"username": LOGIN[0], "password": LOGIN[1]},
    # the caller's own password: each request comes from a fresh admin (make_user's password)
    "POST /api/v1/auth/password": {"current_password": PASSWORD},
    # a reset to one queue's offset: a queue of TopicTest on broker-a, and an offset it holds
    "POST /api/v1/groups/{name}/reset-offset": {"queue_id": 0, "offset": 0},
    # an alert rule's target: for group kinds a group its brokers know (a rule naming another is refused)
    "POST /api/v1/alert-rules": {"target": EXAMPLE_GROUP},
    "PUT /api/v1/alert-rules/{id}": {"target": EXAMPLE_GROUP},
}
# ... and body fields naming things the fixture makes (_existing_things fills it): a dead letter's id for a resend
MADE_BODY: dict[str, dict] = {}
PUSH_GROUP = "fuzz_push_group"  # fuzz_cluster's push member: a message's resend goes to it


@pytest.fixture(scope="module")
def quickstart_cluster(tmp_path_factory):
    """A cluster of this module's own named like RocketMQ's quick start (DefaultCluster, broker-a, broker-b)
    holding the examples' topic; the fuzz may change and delete things in it."""
    from brokers.engine.client.admin import BlockingMQAdminClient
    from tests.brokers.engine.acl._acl_cluster import ADMIN, acl_text, write_acl
    from tests.brokers.engine.client._cluster import EmbeddedCluster, create_topic

    root = tmp_path_factory.mktemp("fuzz-cluster")
    acl_file = write_acl(root / "plain_acl.yml", acl_text())
    cluster = EmbeddedCluster(
        root / "stores", cluster=EXAMPLE_CLUSTER, namesrv_options={"acl_file": str(acl_file)}, acl_file=str(acl_file)
    ).start()
    with BlockingMQAdminClient(cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        create_topic(admin, cluster, EXAMPLE_TOPIC, queues=4)
    yield cluster
    cluster.stop()


@pytest.fixture
def fuzz_cluster(quickstart_cluster, mq_settings, celery_redis, settings):
    """The quick-start cluster with the Django side pointed at it and a live member of the examples' group."""
    from brokers.engine.client.simple import PullClient

    from brokers.gateway.client import reset_admin_client
    from tests.brokers.engine.acl._acl_cluster import ADMIN

    mq_settings(quickstart_cluster.namesrv_addr)
    settings.MQ = {**settings.MQ, "ACCESS_KEY": ADMIN[0], "SECRET_KEY": ADMIN[1]}
    reset_admin_client()
    settings.GANTRY_SHRINK_SETTLE_S = 0
    settings.GANTRY_ALERT_WEBHOOK_ALLOW_PRIVATE = (
        True  # EXISTING_FIELDS' webhook_url: loopback, never a real outbound call
    )
    member = PullClient(
        quickstart_cluster.namesrv_addr,
        EXAMPLE_GROUP,
        instance_name="fuzz-1",
        heartbeat_interval_s=None,
        access_key=ADMIN[0],
        secret_key=ADMIN[1],
    )
    member.subscribe(EXAMPLE_TOPIC, "*")
    for mq in member.fetch_subscribe_message_queues(
        EXAMPLE_TOPIC
    ):  # committed offsets: a reset of the online group applies
        member.update_offset(mq, 0)
    # a push member of a group of its own on the examples' topic: a message's resend needs one online
    from brokers.engine.client import ConsumeConcurrentlyStatus, PushConsumer

    pusher = PushConsumer(
        PUSH_GROUP, quickstart_cluster.namesrv_addr, instance_name="fuzz-push", access_key=ADMIN[0], secret_key=ADMIN[1]
    )
    pusher.subscribe(EXAMPLE_TOPIC, "*")
    pusher.register_listener(lambda msgs: ConsumeConcurrentlyStatus.CONSUME_SUCCESS)
    pusher.start()
    yield quickstart_cluster
    pusher.shutdown()
    member.close()


@contextmanager
def wsgi_app():
    """Django's WSGI app, with the per-request connection closing off (the test's transaction stays open),
    as Django's own test client does around each of its requests."""
    from django.core.handlers.wsgi import WSGIHandler
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _admin_token(make_user, username: str) -> str:
    from console.actor import Actor
    from console.roles import Role
    from console.services import api_token_create

    user = make_user("admin", username=username)
    return api_token_create(actor=Actor(user.username, Role.ADMIN, "api"), username=user.username).token


def _existing_things(auth: dict, cluster) -> dict:
    """Path parameters that name something which must exist: the schema gives their format and an example,
    not existence, so the fuzz puts in things this fixture holds (a callable makes a throwaway one per request)."""
    import itertools

    from brokers.engine.client.admin import BlockingMQAdminClient
    from rest_framework.test import APIClient
    from tests.brokers.engine.acl._acl_cluster import ADMIN, DEMO
    from tests.brokers.engine.client._cluster import create_topic

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=auth["Authorization"])
    rebalance = client.post(f"/api/v1/groups/{EXAMPLE_GROUP}/rebalance", {"dry_run": True}, format="json").json()
    refresh = client.post("/api/v1/dashboards/refresh", {}, format="json").json()
    sent = client.post(f"/api/v1/topics/{EXAMPLE_TOPIC}/messages", {"body": "hello"}, format="json").json()
    counter = itertools.count()

    def throwaway_topic() -> str:
        name = f"FuzzThrowaway{next(counter)}"
        with BlockingMQAdminClient(cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
            create_topic(admin, cluster, name, queues=1)
        return name

    def throwaway_subscription_group() -> str:
        from console.actor import Actor
        from console.roles import Role
        from consumers.subscription_groups.services import SubscriptionGroupSpec, subscription_group_create

        name = f"FuzzThrowawayGroup{next(counter)}"  # through the service, as throwaway_account
        subscription_group_create(
            actor=Actor("fuzz-schema", Role.ADMIN, "api"), spec=SubscriptionGroupSpec(name, cluster=EXAMPLE_CLUSTER)
        )
        return name

    def throwaway_account() -> str:
        from brokers.acl.services import AccountInput, acl_account_save
        from console.actor import Actor
        from console.roles import Role

        access_key = (
            f"fuzzthrowaway{next(counter)}"  # through the service: the test client would close the test's database
        )
        acl_account_save(
            actor=Actor("fuzz-schema", Role.ADMIN, "api"), data=AccountInput(access_key, "fuzz-secret-1"), create=True
        )
        return access_key

    def throwaway_token() -> int:
        from console.actor import Actor
        from console.models import ApiToken
        from console.roles import Role
        from console.services import api_token_create

        api_token_create(actor=Actor("fuzz-schema", Role.ADMIN, "api"), username="fuzz-target")
        return ApiToken.objects.filter(user__username="fuzz-target").latest("id").id

    from brokers.models import PromotionJob

    promotion = PromotionJob.objects.create(
        requested_by="fuzz-schema",
        broker_name="broker-a",
        broker_id=1,
        candidate_addr="127.0.0.1:1",
        scope_key="dry:broker-a",
        status=PromotionJob.PLANNED,
    )
    from health.models import AlertEvent, AlertRule

    def alert_rule() -> AlertRule:
        return AlertRule.objects.create(name="fuzz", kind="lag_above", target=EXAMPLE_GROUP, emails=["ops@example.com"])

    rule = alert_rule()
    from brokers.models import NamesrvSet

    NamesrvSet.objects.create(name="fuzz-set", namesrv_addr=cluster.namesrv_addr)

    def throwaway_namesrv_set() -> str:
        return NamesrvSet.objects.create(name=f"fuzz-throwaway-{next(counter)}", namesrv_addr=cluster.namesrv_addr).name

    event = AlertEvent.objects.create(
        rule=rule, rule_name=rule.name, kind=rule.kind, target=rule.target, state="firing", message="fuzz"
    )
    topic, group = EXAMPLE_TOPIC, EXAMPLE_GROUP
    things = {
        ("/topics/{name}" + tail, "name"): topic
        for tail in ("", "/advice", "/consumer-groups", "/messages", "/route", "/shrink", "/status")
    }
    things |= {
        ("/groups/{name}" + tail, "name"): group
        for tail in (
            "",
            "/advice",
            "/allocation",
            "/progress",
            "/rebalance",
            "/reset-offset",
            "/dlq",
            "/dlq/resend",
            "/dlq/export",
            "/pop-state",
        )
    }
    things[("/subscription-groups/{name}", "name")] = group
    things |= {
        ("/brokers/{name}/promote", "name"): "broker-a",
        ("/broker-groups/{name}", "name"): "broker-a",
        ("/broker-groups/{name}/config", "name"): "broker-a",
        ("/brokers/{name}/runtime", "name"): "broker-a",
        ("/clusters/{name}", "name"): EXAMPLE_CLUSTER,
        ("/acl/accounts/{access_key}", "access_key"): DEMO[0],
        ("/users/{username}", "username"): "fuzz-patched",
        ("/users/{username}/password", "username"): "fuzz-patched",
        ("/rebalance-jobs/{id}", "id"): str(rebalance.get("id")),
        ("/dashboards/refresh-runs/{id}", "id"): refresh.get("id"),
        ("/messages/{msg_id}", "msg_id"): sent.get("offset_msg_id"),
        ("/messages/{msg_id}/trace", "msg_id"): sent.get("msg_id"),
        ("/promotion-jobs/{id}", "id"): str(promotion.id),
        ("/tokens/{id}", "id"): throwaway_token,
        ("/namesrv-sets/{name}", "name"): "fuzz-set",
        ("/alert-rules/{id}", "id"): str(rule.id),
        ("/alert-rules/{id}/silence", "id"): str(rule.id),
        ("/alert-rules/{id}/enable", "id"): str(rule.id),
        ("/alert-events/{id}", "id"): str(event.id),
        ("/alert-events/{id}/acknowledge", "id"): str(event.id),
    }
    # the live member of the examples' group (fuzz_cluster's PullClient) for its running info
    member_id = client.get(f"/api/v1/groups/{group}").json()["members"][0]["client_id"]
    things |= {
        ("/groups/{name}/clients/{client_id}/running-info", "name"): group,
        ("/groups/{name}/clients/{client_id}/running-info", "client_id"): member_id,
    }
    # a message of the examples' topic (its offset id) and the push member to resend it to
    things |= {
        ("/messages/{msg_id}/track", "msg_id"): sent.get("offset_msg_id"),
        ("/messages/{msg_id}/resend", "msg_id"): sent.get("offset_msg_id"),
    }
    pusher_id = wait_until(
        lambda: next(
            (
                g["clients"]
                for g in client.get(f"/api/v1/messages/{sent.get('offset_msg_id')}/track").json()["groups"]
                if g["group"] == PUSH_GROUP and g["clients"]
            ),
            None,
        ),
        what="the push member online",
    )[0]
    MADE_BODY["POST /api/v1/messages/{msg_id}/resend"] = {
        "group": PUSH_GROUP,
        "client_id": pusher_id,
        "topic": EXAMPLE_TOPIC,
    }
    things = {("/api/v1" + path, name): value for (path, name), value in things.items()}
    # a dead letter of the examples' group, as the broker would have moved it there, for a resend to find
    MADE_BODY["POST /api/v1/groups/{name}/dlq/resend"] = {"msg_ids": [_dead_letter(cluster, group, sent.get("msg_id"))]}
    # an import of a topic as it stands, and its dry run's plan_id (nothing to write, whatever the target)
    # (OpenAPI 3.0 cannot give a pattern for an object's keys: the dry run gets the same document, with names that exist)
    MADE_BODY["POST /api/v1/metadata/apply"] = _metadata_import(client, cluster)
    MADE_BODY["POST /api/v1/metadata/dry-run"] = {"metadata": MADE_BODY["POST /api/v1/metadata/apply"]["metadata"]}
    things[("/api/v1/topics/{name}", "name", "DELETE")] = throwaway_topic
    things[("/api/v1/acl/accounts/{access_key}", "access_key", "DELETE")] = throwaway_account
    things[("/api/v1/subscription-groups/{name}", "name", "DELETE")] = throwaway_subscription_group
    things[("/api/v1/alert-rules/{id}", "id", "DELETE")] = lambda: str(alert_rule().id)
    things[("/api/v1/namesrv-sets/{name}", "name", "DELETE")] = throwaway_namesrv_set
    return things


def _metadata_import(client, cluster) -> dict:
    """A metadata document of a topic of its own (nobody else changes it) and the plan_id of its dry run."""
    from brokers.engine.client.admin import BlockingMQAdminClient
    from tests.brokers.engine.acl._acl_cluster import ADMIN
    from tests.brokers.engine.client._cluster import create_topic

    with BlockingMQAdminClient(cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        create_topic(admin, cluster, "FuzzMetadataTopic", queues=2)
    exported = client.get("/api/v1/metadata/export").json()["topicConfigTable"]
    document = {"topicConfigTable": {"FuzzMetadataTopic": exported["FuzzMetadataTopic"]}}
    return {
        "metadata": document,
        "plan_id": client.post("/api/v1/metadata/dry-run", {"metadata": document}, format="json").json()["plan_id"],
    }


def _dead_letter(cluster, group: str, origin_msg_id: str | None) -> str:
    """Put one message into ``%DLQ%<group>`` with the properties the broker's sendback sets; its offset message id."""
    from brokers.engine.client.admin import BlockingMQAdminClient
    from brokers.engine.client.simple import SimpleProducer
    from brokers.engine.common.message import Message
    from tests.brokers.engine.acl._acl_cluster import ADMIN
    from tests.brokers.engine.client._cluster import create_topic

    dlq = f"%DLQ%{group}"
    with BlockingMQAdminClient(cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        create_topic(admin, cluster, dlq, queues=1)
    with SimpleProducer(
        cluster.namesrv_addr, "fuzz_dlq", heartbeat_interval_s=None, access_key=ADMIN[0], secret_key=ADMIN[1]
    ) as producer:
        props = {"RETRY_TOPIC": EXAMPLE_TOPIC, "ORIGIN_MESSAGE_ID": origin_msg_id or "0" * 32}
        return producer.send(Message(dlq, b"failed three times", properties=props)).offset_msg_id


def test_every_operation_answers_below_500_in_the_schema_and_mostly_accepts_valid_input(
    fuzz_cluster, make_user
) -> None:
    import schemathesis

    auth = {"Authorization": f"Token {_admin_token(make_user, 'fuzz-schema')}"}
    make_user("operator", username="fuzz-target")  # gets tokens (POST tokens, DELETE tokens/{id})
    make_user("operator", username="fuzz-patched")  # PATCH users/{username} may deactivate it
    make_user("viewer", username=LOGIN[0], password=LOGIN[1])
    existing = _existing_things(auth, fuzz_cluster)
    with wsgi_app() as app:
        _fuzz(schemathesis.openapi.from_wsgi("/api/v1/schema?format=json", app, headers=auth), existing, make_user)


def _existing_fields(case, label: str) -> None:
    """Put things the fixture holds into the generated query and body where they name something that must exist:
    EXISTING_FIELDS and EXISTING_BODY, broker names as the keys of a topic's ``brokers``, and the URL's topic as
    the ``name`` a PUT or PATCH of a topic may repeat."""
    for name in case.query or {}:
        if name in EXISTING_FIELDS or name in EXISTING_QUERY:
            case.query[name] = EXISTING_FIELDS.get(name, EXISTING_QUERY.get(name))
    if not isinstance(case.body, dict):
        return
    for name in case.body:
        if name in EXISTING_FIELDS and isinstance(case.body[name], str):
            case.body[name] = EXISTING_FIELDS[name]
    case.body.update({k: v for k, v in EXISTING_BODY.get(label, {}).items() if k in case.body})
    case.body.update({k: v for k, v in MADE_BODY.get(label, {}).items() if k in case.body})
    if isinstance(case.body.get("brokers"), dict):
        brokers = ("broker-a", "broker-b")
        case.body["brokers"] = {brokers[i % 2]: v for i, v in enumerate(case.body["brokers"].values())}
    if "name" in case.body and label.startswith(("PUT /api/v1/topics/", "PATCH /api/v1/topics/")):
        case.body["name"] = case.path_parameters["name"]


def _fuzz(schema, existing: dict, make_user) -> None:
    from hypothesis import HealthCheck, given, settings
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

    statuses: dict[str, Counter] = defaultdict(Counter)
    failures: list[str] = []
    first_refusal: dict[str, str] = {}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 40

    # deletes last, so what they remove is not missed by the operations after them
    operations.sort(key=lambda op: op.method.upper() == "DELETE")
    tokens = itertools.count()
    for n, operation in enumerate(operations):
        label = f"{operation.method.upper()} {operation.path}"
        # an admin of the operation's own: DELETE auth/token revokes the caller's token, PATCH users/{username} may demote it
        auth = {"Authorization": f"Token {_admin_token(make_user, f'fuzz-admin-{n}')}"}

        # DELETE auth/token revokes the token it is called with; POST auth/password changes the caller's password
        fresh_auth = label in ("DELETE /api/v1/auth/token", "POST /api/v1/auth/password")

        @settings(
            max_examples=FUZZ_EXAMPLES,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def fuzz(case) -> None:
            for name in case.path_parameters or {}:
                value = existing.get(
                    (operation.path, name, operation.method.upper()), existing.get((operation.path, name))
                )
                if value is not None:
                    case.path_parameters[name] = value() if callable(value) else value
            _existing_fields(case, label)
            headers = (
                {"Authorization": f"Token {_admin_token(make_user, f'fuzz-admin-{n}-{next(tokens)}')}"}
                if fresh_auth
                else auth
            )
            response = case.call(headers=headers)
            if 400 <= response.status_code < 500 and label not in first_refusal:
                first_refusal[label] = response.text[:300]
            statuses[label][response.status_code] += 1
            try:
                case.validate_response(
                    response, checks=[not_a_server_error, status_code_conformance, response_schema_conformance]
                )
            except BaseException as exc:  # noqa: BLE001 - collect every operation's failure, not only the first
                failures.append(f"{label} {response.status_code}: {str(exc)[:600]}")

        fuzz()

    refusals = {
        label: sum(n for code, n in c.items() if 400 <= code < 500) / sum(c.values()) for label, c in statuses.items()
    }
    report = "\n".join(
        f"{share:4.0%} refused  {label}  {dict(statuses[label])}" for label, share in sorted(refusals.items())
    )
    print(report)
    print("\n".join(f"{k}: {v}" for k, v in sorted(first_refusal.items())))
    assert not failures, "\n".join(failures)
    mostly_refusing = [label for label, share in refusals.items() if share > 0.5]
    assert len(mostly_refusing) < len(operations) / 10, report

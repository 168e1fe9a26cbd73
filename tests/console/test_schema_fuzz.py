"""Fuzz /api/v1 from its own OpenAPI schema (schemathesis) as an admin, in process through Django's WSGI app.

Every operation gets a few derandomized schema-valid requests (FUZZ_EXAMPLES, plus the schema's own
examples) against a cluster of this module's own that holds the things the schema's examples name
(topic ``TopicTest``, group ``please_rename_unique_group_name``, broker ``broker-a``, cluster
``DefaultCluster``) and a private Redis with no Celery worker, so jobs the fuzz starts stay queued.
Every answer must be below 500 and match the schema (status documented, body of the documented
shape). The measurement: per operation, the share of requests refused with a 4xx; fewer than a
tenth of the operations may refuse most (more than half) of what the schema calls valid.
Everything runs in the test's database transaction, rolled back at the end.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from contextlib import contextmanager

import pytest

from console.schema_examples import EXAMPLE_CLUSTER, EXAMPLE_GROUP, EXAMPLE_TOPIC

pytestmark = pytest.mark.django_db

FUZZ_EXAMPLES = 6  # generated requests per operation (the schema's examples come on top)


@pytest.fixture(scope="module")
def quickstart_cluster(tmp_path_factory):
    """A cluster of this module's own named like RocketMQ's quick start (DefaultCluster, broker-a, broker-b)
    holding the examples' topic; the fuzz may change and delete things in it."""
    from brokers.engine.client.admin import BlockingMQAdminClient
    from tests.brokers.engine.acl._acl_cluster import ADMIN, acl_text, write_acl
    from tests.brokers.engine.client._cluster import EmbeddedCluster, create_topic

    root = tmp_path_factory.mktemp("fuzz-cluster")
    acl_file = write_acl(root / "plain_acl.yml", acl_text())
    cluster = EmbeddedCluster(root / "stores", cluster=EXAMPLE_CLUSTER, namesrv_options={"acl_file": str(acl_file)},
                              acl_file=str(acl_file)).start()
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
    member = PullClient(quickstart_cluster.namesrv_addr, EXAMPLE_GROUP, instance_name="fuzz-1", heartbeat_interval_s=None,
                        access_key=ADMIN[0], secret_key=ADMIN[1])
    member.subscribe(EXAMPLE_TOPIC, "*")
    yield quickstart_cluster
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

    def throwaway_token() -> int:
        from console.actor import Actor
        from console.models import ApiToken
        from console.roles import Role
        from console.services import api_token_create

        api_token_create(actor=Actor("fuzz-schema", Role.ADMIN, "api"), username="fuzz-target")
        return ApiToken.objects.filter(user__username="fuzz-target").latest("id").id

    topic, group = EXAMPLE_TOPIC, EXAMPLE_GROUP
    things = {("/topics/{name}" + tail, "name"): topic for tail in ("", "/consumer-groups", "/messages", "/route", "/shrink", "/status")}
    things |= {("/groups/{name}" + tail, "name"): group for tail in ("", "/allocation", "/progress", "/rebalance", "/reset-offset")}
    things |= {("/brokers/{name}/promote", "name"): "broker-a", ("/broker-groups/{name}", "name"): "broker-a",
               ("/clusters/{name}", "name"): EXAMPLE_CLUSTER, ("/acl/accounts/{access_key}", "access_key"): DEMO[0],
               ("/users/{username}", "username"): "fuzz-target", ("/rebalance-jobs/{id}", "id"): str(rebalance.get("id")),
               ("/dashboards/refresh-runs/{id}", "id"): refresh.get("id"), ("/messages/{msg_id}", "msg_id"): sent.get("msg_id"),
               ("/tokens/{id}", "id"): throwaway_token}
    things = {("/api/v1" + path, name): value for (path, name), value in things.items()}
    things[("/api/v1/topics/{name}", "name", "DELETE")] = throwaway_topic
    return things


@pytest.mark.xfail(strict=False, reason="issue 17 item 8 unfinished: the schema does not yet document 400/401/404/409 "
                   "bodies, the query enums and the body rules (see the printed per-operation refusal report)")
def test_every_operation_answers_below_500_in_the_schema_and_mostly_accepts_valid_input(
        fuzz_cluster, make_user) -> None:
    import schemathesis

    auth = {"Authorization": f"Token {_admin_token(make_user, 'fuzz-schema')}"}
    make_user("operator", username="fuzz-target")
    existing = _existing_things(auth, fuzz_cluster)
    with wsgi_app() as app:
        _fuzz(schemathesis.openapi.from_wsgi("/api/v1/schema?format=json", app, headers=auth), existing, make_user)


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
    for n, operation in enumerate(operations):
        label = f"{operation.method.upper()} {operation.path}"
        # an admin of the operation's own: DELETE auth/token revokes the caller's token, PATCH users/{username} may demote it
        auth = {"Authorization": f"Token {_admin_token(make_user, f'fuzz-admin-{n}')}"}

        @settings(max_examples=FUZZ_EXAMPLES, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def fuzz(case) -> None:
            for name in case.path_parameters or {}:
                value = existing.get((operation.path, name, operation.method.upper()), existing.get((operation.path, name)))
                if value is not None:
                    case.path_parameters[name] = value() if callable(value) else value
            response = case.call(headers=auth)
            if 400 <= response.status_code < 500 and label not in first_refusal:
                first_refusal[label] = response.text[:300]
            statuses[label][response.status_code] += 1
            try:
                case.validate_response(response, checks=[not_a_server_error, status_code_conformance,
                                                         response_schema_conformance])
            except BaseException as exc:  # noqa: BLE001 - collect every operation's failure, not only the first
                failures.append(f"{label} {response.status_code}: {str(exc)[:600]}")

        fuzz()

    refusals = {label: sum(n for code, n in c.items() if 400 <= code < 500) / sum(c.values()) for label, c in statuses.items()}
    report = "\n".join(f"{share:4.0%} refused  {label}  {dict(statuses[label])}" for label, share in sorted(refusals.items()))
    print(report)
    print("\n".join(f"{k}: {v}" for k, v in sorted(first_refusal.items())))
    assert not failures, "\n".join(failures)
    mostly_refusing = [label for label, share in refusals.items() if share > 0.5]
    assert len(mostly_refusing) < len(operations) / 10, report

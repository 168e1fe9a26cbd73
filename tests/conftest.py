"""Fixtures shared across the suite: an embedded cluster and pointing Django at it."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def session_cluster(tmp_path_factory):
    """One real name server and brokers broker-a, broker-b on ephemeral loopback ports."""
    from tests.brokers.engine.client._cluster import EmbeddedCluster

    cluster = EmbeddedCluster(tmp_path_factory.mktemp("session-cluster")).start()
    yield cluster
    cluster.stop()


@pytest.fixture
def mq_settings(settings):
    """Return a function that points the Django side at a name server address."""
    from brokers.gateway.client import reset_admin_client

    def point_at(namesrv_addr: str) -> None:
        settings.MQ = {**settings.MQ, "NAMESRV_ADDR": namesrv_addr, "ADMIN_TIMEOUT_S": 2.0}
        reset_admin_client()

    yield point_at
    reset_admin_client()


@pytest.fixture
def unused_addr() -> str:
    """A loopback address where nothing listens."""
    from tests.celery_fixtures import free_port

    return f"127.0.0.1:{free_port()}"


def pytest_collection_modifyitems(config, items):
    """Run browser tests last: Playwright's sync API holds an event loop on the main thread while
    a browser is open, and tests that call asyncio.run() cannot share the thread with it."""
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)


# -- console users, roles and API clients -----------------------------------------------------------

PASSWORD = "correct-horse-battery-staple"  # passes the password validators


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hashing():
    """Tests create many users: hash their passwords cheaply (production keeps PBKDF2)."""
    from django.conf import settings
    from django.test import override_settings

    if not settings.configured:  # pure-engine runs with -p no:django have no settings
        yield
        return
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture
def make_user(db):
    """Return a function that creates an active user with a role (viewer, operator, admin)."""
    from django.contrib.auth import get_user_model

    from console.models import AccountRole

    def make(role: str = "viewer", username: str | None = None, password: str = PASSWORD):
        user = get_user_model().objects.create_user(username=username or f"{role}-user", password=password)
        AccountRole.objects.create(user=user, role=role)
        return user

    return make


@pytest.fixture
def api_client_as(make_user):
    """Return a function giving a DRF APIClient that authenticates with a real API token of a user
    with the given role (``None``: no credentials)."""
    from rest_framework.test import APIClient

    from console.actor import Actor
    from console.roles import Role
    from console.services import api_token_create

    def client_for(role: str | None):
        client = APIClient()
        if role is not None:
            user = make_user(role, username=f"api-{role}")
            created = api_token_create(actor=Actor(user.username, Role(role), "api"), username=user.username)
            client.credentials(HTTP_AUTHORIZATION=f"Token {created.token}")
        return client

    return client_for


@pytest.fixture
def topic_name(request):
    """A topic name unique to this test (the session cluster is shared by all tests)."""
    import re
    import uuid

    base = re.sub(r"[^A-Za-z0-9_-]", "_", request.node.name)[:60]
    return f"T_{base}_{uuid.uuid4().hex[:8]}"


# -- Redis and Celery workers (tests/celery_fixtures.py) ---------------------------------------------
from tests.celery_fixtures import celery_redis, celery_worker, redis_server  # noqa: E402,F401

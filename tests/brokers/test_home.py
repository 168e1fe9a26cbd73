"""The overview page lists the live brokers, read through the admin client."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_home_requires_login(client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_health_is_open(client) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_home_lists_live_brokers(admin_client, session_cluster, mq_settings) -> None:
    mq_settings(session_cluster.namesrv_addr)
    response = admin_client.get("/")
    assert response.status_code == 200
    page = response.content.decode()
    for name in ("broker-a", "broker-b"):
        assert name in page
        assert session_cluster.broker_addr(name) in page
    assert "live" in page
    assert session_cluster.namesrv_addr in page


def test_htmx_refresh_returns_only_the_table(admin_client, session_cluster, mq_settings) -> None:
    mq_settings(session_cluster.namesrv_addr)
    response = admin_client.get("/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    page = response.content.decode()
    assert "<html" not in page
    assert "broker-a" in page


def test_home_says_so_when_the_name_server_is_down(admin_client, mq_settings, unused_addr) -> None:
    mq_settings(unused_addr)
    response = admin_client.get("/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "name server unreachable" in page
    assert unused_addr in page

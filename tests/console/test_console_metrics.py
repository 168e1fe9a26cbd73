"""The console's own /metrics (console/metrics.py): refused anonymously, the Prometheus text format
(parsed by prometheus-client) for a token or a session, request counts per view."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.django_db


def _families(response) -> dict:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    return {f.name: f for f in text_string_to_metric_families(response.content.decode())}


def test_anonymous_scrape_is_refused(client) -> None:
    response = client.get("/metrics")
    assert response.status_code in (401, 403)
    assert b"gantry_console" not in response.content


def test_signed_in_scrape_parses_and_counts_requests(client, make_user) -> None:
    client.force_login(make_user("viewer"))
    assert client.get("/health").status_code == 200
    families = _families(client.get("/metrics"))
    counted = {
        (s.labels["view"], s.labels["status"])
        for s in families["gantry_console_requests"].samples
        if s.name.endswith("_total")
    }
    assert ("health", "200") in counted
    assert "gantry_console_request_latency_seconds" in families
    assert families["gantry_console_celery_broker_up"].samples[0].value in (0.0, 1.0)

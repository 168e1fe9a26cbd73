"""The request id: answered in X-Request-ID (the caller's if well formed), on log lines and in the audit row."""

from __future__ import annotations

import io
import json
import logging
import re

import pytest

from console.log_format import JsonFormatter
from console.models import AuditEntry
from console.request_id import RequestIdFilter

pytestmark = pytest.mark.django_db

GENERATED = re.compile(r"[0-9a-f]{32}")


def test_every_response_carries_a_request_id_and_a_well_formed_incoming_one_is_kept(client) -> None:
    first, second = client.get("/healthz"), client.get("/healthz")
    assert GENERATED.fullmatch(first["X-Request-ID"]) and first["X-Request-ID"] != second["X-Request-ID"]
    assert client.get("/healthz", HTTP_X_REQUEST_ID="lb-7f3a9c2e-0001")["X-Request-ID"] == "lb-7f3a9c2e-0001"
    for hostile in ("short", "a b c d e f g h", "x" * 65, "<script>alert(1)</script>", "id\r\nSet-Cookie: a=b"):
        answered = client.get("/healthz", HTTP_X_REQUEST_ID=hostile)["X-Request-ID"]
        assert GENERATED.fullmatch(answered), hostile  # replaced, never echoed


def test_the_audit_row_names_the_request_that_made_the_change(api_client_as) -> None:
    admin = api_client_as("admin")
    response = admin.post(
        "/api/v1/users", {"username": "olga", "role": "operator"}, format="json", HTTP_X_REQUEST_ID="req-audit-0001"
    )
    assert response.status_code == 201 and response["X-Request-ID"] == "req-audit-0001"
    assert AuditEntry.objects.get(action="user.create", target="olga").request_id == "req-audit-0001"
    listed = admin.get("/api/v1/audit-log", {"action": "user.create"}).json()["results"][0]
    assert listed["request_id"] == "req-audit-0001"


def test_log_lines_of_a_request_carry_its_id(client) -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    try:
        client.get("/no-such-page", HTTP_X_REQUEST_ID="req-log-00000001")  # django.request warns: Not Found
    finally:
        logger.removeHandler(handler)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert any(e["request_id"] == "req-log-00000001" and "Not Found" in e["message"] for e in lines), lines

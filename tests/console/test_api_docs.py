"""The OpenAPI 3 schema at /api/v1/schema and Swagger UI at /api/v1/docs, from vendored files only."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db


def test_schema_is_openapi_3_and_names_every_resource(api_client_as) -> None:
    response = api_client_as("viewer").get("/api/v1/schema", {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    for path in (
        "/api/v1/topics",
        "/api/v1/topics/{name}",
        "/api/v1/topics/{name}/status",
        "/api/v1/clusters",
        "/api/v1/brokers",
        "/api/v1/audit-log",
        "/api/v1/auth/token",
        "/api/v1/users",
        "/api/v1/tokens",
    ):
        assert path in schema["paths"], path
    assert set(schema["paths"]["/api/v1/topics/{name}"]) >= {"get", "put", "patch", "delete"}
    assert "apiToken" in schema["components"]["securitySchemes"]


def test_docs_load_nothing_from_other_sites(client, make_user) -> None:
    client.force_login(make_user("viewer"))
    page = client.get("/api/v1/docs").content.decode()
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page)
    assert urls and all(not u.startswith(("http:", "https:", "//")) for u in urls), urls
    for url in urls:
        if url.startswith("/static/"):
            assert finders.find(url.removeprefix("/static/")), url


def test_docs_and_schema_need_login(client) -> None:
    assert client.get("/api/v1/docs").status_code == 401
    assert client.get("/api/v1/schema").status_code == 401


def test_unknown_api_urls_answer_json_404(api_client_as) -> None:
    response = api_client_as("viewer").get("/api/v1/nothing-here")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_schema_generates_without_warnings(tmp_path) -> None:
    """Every endpoint is described well enough for drf-spectacular (no guessed types)."""
    from django.core.management import call_command

    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/v1/topics/{name}/status" in out.read_text()

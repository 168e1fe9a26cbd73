"""Hostile JSON to the API: too deep is a 400, too large a 413, never a 500 (console.json_parser,
console.middleware.BodySizeLimitMiddleware)."""

from __future__ import annotations

import pytest
from django.test import Client

from console.json_parser import MAX_JSON_DEPTH, json_depth

pytestmark = pytest.mark.django_db

TOKEN_URL = "/api/v1/auth/token"


def _nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def test_json_nested_100k_deep_is_400_not_500(settings) -> None:
    body = _nested(100_000)
    assert len(body) <= settings.MAX_BODY_BYTES  # under the size limit: the depth is what is refused
    response = Client(raise_request_exception=False).post(TOKEN_URL, body, content_type="application/json")
    assert response.status_code == 400, response.content[:200]
    assert response.json()["detail"] == f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels"


def test_json_just_past_the_limit_is_400_and_at_the_limit_is_parsed(api_client_as) -> None:
    admin = api_client_as("admin")
    deep = '{"username": "u", "role": "viewer", "x": %s}' % _nested(MAX_JSON_DEPTH)  # 1 + 64 levels
    response = admin.generic("POST", "/api/v1/users", deep, content_type="application/json")
    assert response.status_code == 400 and "nested deeper" in response.json()["detail"]
    ok_depth = '{"username": "u", "role": "viewer", "x": %s}' % _nested(MAX_JSON_DEPTH - 1)
    response = admin.generic("POST", "/api/v1/users", ok_depth, content_type="application/json")
    assert response.status_code == 400 and response.json()["fields"] == {
        "x": ["unknown field."]
    }  # parsed, then validated


def test_a_huge_body_is_413_before_parsing(settings) -> None:
    body = '{"username": "u", "password": "%s"}' % ("x" * settings.MAX_BODY_BYTES)
    response = Client(raise_request_exception=False).post(TOKEN_URL, body, content_type="application/json")
    assert response.status_code == 413 and response.json()["code"] == "too_large"


def test_json_depth() -> None:
    assert [json_depth(v) for v in (1, [], {"a": [1, {"b": []}]}, [[[]]])] == [0, 1, 4, 3]

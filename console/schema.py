"""OpenAPI pieces drf-spectacular cannot guess: the API token security scheme."""
from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "console.authentication.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <token>`; get one with POST /api/v1/auth/token.",
        }


def document_without_trailing_slash(endpoints):
    """Preprocessing hook: routes take an optional trailing slash; document them without it."""
    return [(path.rstrip("/") or "/", regex, method, callback) for path, regex, method, callback in endpoints]

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


def describe_name_parameters(result, generator, request, public):
    """Postprocessing hook: give the path parameters that name a topic, group, broker or cluster the naming
    rule's pattern (console.schema_examples derives it from the engine's TopicValidator) and a quick-start example."""
    from console.schema_examples import (
        EXAMPLE_BROKER, EXAMPLE_CLUSTER, EXAMPLE_GROUP, EXAMPLE_TOPIC, GROUP_NAME_PATTERN, TOPIC_NAME_PATTERN,
    )

    kinds = {"/api/v1/topics/": (TOPIC_NAME_PATTERN, EXAMPLE_TOPIC), "/api/v1/groups/": (GROUP_NAME_PATTERN, EXAMPLE_GROUP),
             "/api/v1/brokers/": (None, EXAMPLE_BROKER), "/api/v1/broker-groups/": (None, EXAMPLE_BROKER),
             "/api/v1/clusters/": (None, EXAMPLE_CLUSTER)}
    for path, operations in result.get("paths", {}).items():
        kind = next((v for prefix, v in kinds.items() if path.startswith(prefix + "{name}")), None)
        if kind is None:
            continue
        pattern, example = kind
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "path" and parameter.get("name") == "name":
                    if pattern:
                        parameter["schema"]["pattern"] = pattern
                    parameter["example"] = example
    return result

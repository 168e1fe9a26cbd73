"""OpenAPI pieces drf-spectacular cannot guess: the API token security scheme, the error body every
operation may answer, what strict input serializers refuse, and the naming rule of names."""

from __future__ import annotations

import copy
import re

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import is_list_serializer
from drf_spectacular.utils import OpenApiParameter
from rest_framework.settings import api_settings


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
    """Postprocessing hook: give what names a topic, group, broker or cluster (path and query parameters,
    request body fields) the naming rule's pattern (console.schema_examples derives it from the engine's
    TopicValidator) and a quick-start example."""
    from console.schema_examples import (
        EXAMPLE_BROKER,
        EXAMPLE_CLUSTER,
        EXAMPLE_GROUP,
        EXAMPLE_TOPIC,
        GROUP_NAME_PATTERN,
        TOPIC_NAME_PATTERN,
    )

    kinds = {
        "/api/v1/topics/": (TOPIC_NAME_PATTERN, EXAMPLE_TOPIC),
        "/api/v1/groups/": (GROUP_NAME_PATTERN, EXAMPLE_GROUP),
        "/api/v1/subscription-groups/": (GROUP_NAME_PATTERN, EXAMPLE_GROUP),
        "/api/v1/brokers/": (None, EXAMPLE_BROKER),
        "/api/v1/broker-groups/": (None, EXAMPLE_BROKER),
        "/api/v1/clusters/": (None, EXAMPLE_CLUSTER),
    }
    named = {
        "topic": (TOPIC_NAME_PATTERN, EXAMPLE_TOPIC),
        "group": (GROUP_NAME_PATTERN, EXAMPLE_GROUP),
        "cluster": (None, EXAMPLE_CLUSTER),
        "broker": (None, EXAMPLE_BROKER),
    }

    def describe(schema: dict, kind: tuple) -> None:
        pattern, example = kind
        if schema.get("type") != "string":
            return
        if pattern:
            schema["pattern"] = pattern
        schema.setdefault("example", example)

    for path, operations in result.get("paths", {}).items():
        path_kind = next((v for prefix, v in kinds.items() if path.startswith(prefix + "{name}")), None)
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                where, name = parameter.get("in"), parameter.get("name")
                kind = path_kind if (where, name) == ("path", "name") else named.get(name) if where == "query" else None
                if kind is not None:
                    describe(parameter.setdefault("schema", {"type": "string"}), kind)
                    parameter["example"] = parameter["schema"]["example"]
    for component, schema in result.get("components", {}).get("schemas", {}).items():
        if component.endswith("Request"):
            for name, prop in schema.get("properties", {}).items():
                if name in named:
                    describe(prop, named[name])
    return result


# -- what every operation may answer, and what a strict body refuses ---------------------------------------

PROBLEM_SCHEMA = {
    "type": "object",
    "description": "The API's error body (console.http_errors.Problem): the status again, a short code, what went "
    "wrong, and for refused input the reasons per field (dotted path for nested fields).",
    "properties": {
        "status": {"type": "integer"},
        "code": {"type": "string", "example": "invalid"},
        "detail": {"type": "string"},
        "fields": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
    },
    "required": ["status", "code", "detail"],
}

ERROR_RESPONSES = {
    "400": "refused input: `fields` names each refused field and why",
    "401": "no credentials, or a wrong, revoked or expired token",
    "403": "the caller's role may not do this",
    "404": "what the path (or a named parameter) names does not exist",
    "409": "conflicts with the current state (exists already, a job is under way, not permitted by the broker)",
    "502": "a broker answered with an error the console does not know",
    "503": "the name servers or a broker did not answer, or the cluster is busy",
}


RULES_KEY = "x-gantry-rules"


def apply_schema_rules(result, generator, request, public):
    """Postprocessing hook (after ``postprocess_schema_enums``): the cross-field rules ApiAutoSchema set aside
    join their request bodies, their ``enum`` branches (``scope: group`` needs ``group``) kept as written."""
    for schema in result.get("components", {}).get("schemas", {}).values():
        schema.update(schema.pop(RULES_KEY, {}))
    return result


class ApiAutoSchema(AutoSchema):
    """drf-spectacular's AutoSchema, saying what :class:`console.rest.StrictInputSerializer` enforces:
    unknown fields are refused (``additionalProperties: false``), and what a serializer declares in
    ``schema_rules`` joins its request body: a JSON-schema fragment next to the ``validate`` method or
    validators that enforce it (cross-field ``oneOf``/``anyOf`` of ``required`` lists; under
    ``properties``, ranges and patterns a validator function checks and drf-spectacular cannot read).
    List actions answer a page (console.rest.paginated_response) when they document ``many=True``."""

    def _is_list_view(self, serializer=None) -> bool:
        # a ViewSet's list action answers a list only when it documents ``many=True`` (GET acl/accounts answers
        # one overview object); drf-spectacular would call every list action's answer an array
        if (
            getattr(self.view, "action", None) == "list"
            and serializer is not None
            and not is_list_serializer(serializer)
        ):
            return False
        return super()._is_list_view(serializer)

    def _get_paginator(self):
        # the list actions are plain ViewSets that page with console.rest.paginated_response (the default
        # pagination class): their answer is {count, next, previous, results}
        if getattr(self.view, "action", None) == "list":
            return api_settings.DEFAULT_PAGINATION_CLASS()
        return super()._get_paginator()

    def _map_basic_serializer(self, serializer, direction):
        from console.rest import StrictInputSerializer

        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and isinstance(serializer, StrictInputSerializer):
            schema["additionalProperties"] = False
            rules = copy.deepcopy(getattr(serializer, "schema_rules", None) or {})
            for name, extra in rules.pop("properties", {}).items():  # ranges and patterns of single fields
                if name in schema.get("properties", {}):
                    schema["properties"][name].update(extra)
            if rules:  # cross-field rules join after drf-spectacular's enum hook (it would widen their enums)
                schema[RULES_KEY] = rules
        return schema


class ChoiceSetFieldExtension(OpenApiSerializerFieldExtension):
    """``?status=queued,running``: a comma-separated set of the field's choices, as a pattern."""

    target_class = "console.query_filters.ChoiceSetField"

    def map_serializer_field(self, auto_schema, direction):
        one = "(" + "|".join(re.escape(c) for c in self.target.accepted) + ")"
        return {
            "type": "string",
            "pattern": f"^{one}(,{one})*$",
            "example": self.target.accepted[0],
            "description": f"comma-separated: {', '.join(self.target.accepted)}",
        }


def document_errors(result, generator, request, public):
    """Postprocessing hook: every operation may answer the API's error body with 400, 401, 403, 404, 409,
    502 and 503 (console.http_errors maps every known error to one of them), one with a body 413 and the
    login 429; one shared ``Problem`` component."""
    result.setdefault("components", {}).setdefault("schemas", {})["Problem"] = PROBLEM_SCHEMA
    problem = {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            errors = dict(ERROR_RESPONSES)
            if "requestBody" in operation:
                errors["413"] = "the body is larger than settings.MAX_BODY_BYTES (console.middleware)"
            if operation.get("operationId", "").startswith("auth_token_create"):
                errors["429"] = (
                    "too many failed logins for this username and address: locked for a while (console.lockout)"
                )
            for status, description in errors.items():
                responses.setdefault(status, {"description": description, "content": problem})
    return result


def ordering_parameter(keys, default: str) -> OpenApiParameter:
    """``?ordering=``: one of the view's sort keys (the keys of the dict it gives console.rest.order_by),
    ``-`` for descending."""
    choices = [f"{sign}{key}" for key in sorted(keys) for sign in ("", "-")]
    return OpenApiParameter(
        "ordering",
        str,
        enum=choices,
        description=f"{', '.join(sorted(keys))} (prefix - for descending); default {default}",
    )

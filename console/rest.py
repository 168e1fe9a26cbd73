"""Building blocks for the API's viewsets: strict input serializers, pagination, ordering.

Resources are engine objects (frozen dataclasses), not models, so lists are filtered, ordered
and paginated in memory with the helpers here; output serializers read the dataclasses' fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter
from rest_framework.settings import api_settings

from console import namesrv_scope
from console.errors import NOT_BOTH_TARGETS

T = TypeVar("T")


class Pagination(PageNumberPagination):
    """``?page=2&page_size=50``; pages of 100 by default, at most 1,000. A ``page_size`` that is not
    a whole number from 1 to 1,000 is refused with a 400 naming the field (DRF's own paginator
    answers a default page for ``abc`` or ``0`` and quietly cuts ``5000`` to 1,000)."""

    page_size_query_param = "page_size"
    max_page_size = 1000

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        text = raw.strip()
        if not (text.isascii() and text.isdigit() and len(text) <= 7 and 1 <= int(text) <= self.max_page_size):
            raise serializers.ValidationError(
                {
                    self.page_size_query_param: [
                        f"must be a whole number from 1 to {self.max_page_size}, not {raw[:40]!r}."
                    ]
                }
            )
        return int(text)

    def get_schema_operation_parameters(self, view) -> list[dict]:
        """DRF's parameters, with page_size's bounds (1 to 1,000) stated in the OpenAPI schema."""
        params = super().get_schema_operation_parameters(view)
        for param in params:
            if param.get("name") == self.page_size_query_param:
                param["schema"] = {**param.get("schema", {}), "minimum": 1, "maximum": self.max_page_size}
        return params


class StrictIntegerField(serializers.IntegerField):
    """An integer that must be a JSON integer: no strings, floats or booleans."""

    default_error_messages = {"invalid": "must be an integer (a JSON number without a fraction)."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A string that must be a JSON string (a number is refused, not turned into text)."""

    default_error_messages = {"invalid": "must be a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    default_error_messages = {"invalid": "must be true or false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictInputSerializer(serializers.Serializer):
    """An input serializer that refuses fields it does not know, naming them."""

    def to_internal_value(self, data):
        unknown = (
            {name: ["unknown field."] for name in sorted(set(data) - set(self.fields))}
            if isinstance(data, dict)
            else {}
        )
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            detail = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
            raise serializers.ValidationError({**detail, **unknown}) from None
        if unknown:
            raise serializers.ValidationError(unknown)
        return value


class ClusterOrBrokerInput(serializers.Serializer):
    """An input with optional ``cluster`` and ``broker`` (declared by the subclass): not both."""

    def validate(self, attrs: dict) -> dict:
        if "cluster" in attrs and "broker" in attrs:
            raise serializers.ValidationError({"broker": [NOT_BOTH_TARGETS]})
        return super().validate(attrs)


S = TypeVar("S", bound=serializers.Serializer)


def validated(serializer_class: type[S], data: Any, **kwargs: Any) -> S:
    """The serializer, validated; ValidationError (400, fields named) otherwise."""
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return serializer


def parse_input(serializer_class: type[serializers.Serializer], data: Any, **kwargs: Any) -> dict:
    """Validate ``data`` with ``serializer_class``; raise ValidationError (400) or return the values."""
    return validated(serializer_class, data, **kwargs).validated_data


def query_dict(request: Request) -> dict[str, str]:
    """The query string as a plain dict (last value of a repeated key), without ``namesrv_set`` (the
    tier the call runs against: brokers.namesrv_set_scope's, never a view's input)."""
    return {key: request.query_params.get(key) for key in request.query_params if key != namesrv_scope.PARAM}


def paginated_response(
    request: Request,
    view: Any,
    items: Sequence[Any],
    serializer_class: type[serializers.Serializer],
    extra: dict[str, Any] | None = None,
    prepare: Callable[[list], list] | None = None,
) -> Response:
    """One page of ``items`` rendered by ``serializer_class``: ``{"count", "next", "previous", "results"}``.

    ``prepare`` completes the page's items before they are rendered (details that cost a
    request per item are read for the page only).
    """
    paginator = api_settings.DEFAULT_PAGINATION_CLASS()
    page = paginator.paginate_queryset(items, request, view=view)
    if prepare is not None:
        page = prepare(page)
    response = paginator.get_paginated_response(serializer_class(page, many=True).data)
    if extra:
        response.data.update(extra)
    return response


def order_by(items: Sequence[T], ordering: str | None, keys: dict[str, Callable[[T], Any]], default: str) -> list[T]:
    """Sort by ``?ordering=field`` or ``-field`` among ``keys``; raise ValidationError otherwise."""
    ordering = ordering or default
    name = ordering.lstrip("-")
    if name not in keys:
        raise serializers.ValidationError(
            {"ordering": [f"must be one of {', '.join(sorted(keys))}, optionally with '-'."]}
        )
    return sorted(items, key=keys[name], reverse=ordering.startswith("-"))


class ApiRouter(SimpleRouter):
    """SimpleRouter whose URLs take a trailing slash or not (``/api/v1/topics`` and ``/topics/``)."""

    def __init__(self) -> None:
        super().__init__(trailing_slash=False)
        self.trailing_slash = "/?"

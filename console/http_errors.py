"""The one place where errors become HTTP answers, for the API and the console alike.

:func:`problem_for` maps an exception to a :class:`Problem` (status, code, detail, fields):

- 400 ``invalid``: InvalidInput (names the field), InvalidNameError, InvalidTopicConfigError;
  400 ``rejected``: MQClientError with code -1 (a client-side refusal);
- 403 ``permission_denied``: Forbidden;
- 404 ``not_found``: NotFound; the engine's NotFoundError (TopicNotFound, GroupNotFound and
  GroupNotOnline: TOPIC_NOT_EXIST, SUBSCRIPTION_GROUP_NOT_EXIST, CONSUMER_NOT_ONLINE);
- 409 ``conflict``: Conflict; TopicExists (TOPIC_EXIST_ALREADY), NoPermission (NO_PERMISSION);
- 503 ``unavailable``: Unavailable; BrokerUnavailable (SYSTEM_BUSY, FLOW_CONTROL, SERVICE_NOT_AVAILABLE);
  503 ``namesrv_unreachable`` / ``broker_unreachable``: no answer (connect error or timeout);
- 502 ``broker_error``: any other MQBrokerError or RemotingError.

The engine's errors are the typed ones of :mod:`brokers.engine.client.admin_errors` (the apps catch the
same classes through ``brokers.gateway.errors``); no response code is compared here.

:func:`api_exception_handler` is DRF's EXCEPTION_HANDLER (the JSON body is
``{"status", "code", "detail", "fields"?}``, fields keyed by dotted path);
:class:`console.middleware.EngineErrorMiddleware` renders the same problems as console pages,
and the audit log records their ``detail`` as the reason of a failed change. Anything else is a
bug and stays a 500.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions as drf_exceptions
from rest_framework import status as http
from rest_framework.response import Response

from brokers.engine.client.admin_errors import (
    CLIENT_ERROR,
    BrokerUnavailable,
    MQClientError,
    NoPermission,
    NotFoundError,
    RemotingConnectError,
    RemotingError,
    RemotingTimeoutError,
    TopicExists,
)
from brokers.engine.common.namesrv_addr import parse_namesrv_addrs
from brokers.engine.common.topic_config import InvalidTopicConfigError
from brokers.engine.common.topic_validator import InvalidNameError
from console import namesrv_scope
from console.errors import InvalidInput, ServiceError

log = logging.getLogger(__name__)

_BROKER_ERRORS: tuple[tuple[type[MQClientError], int, str], ...] = (
    (NotFoundError, http.HTTP_404_NOT_FOUND, "not_found"),
    (TopicExists, http.HTTP_409_CONFLICT, "conflict"),
    (NoPermission, http.HTTP_409_CONFLICT, "conflict"),
    (BrokerUnavailable, http.HTTP_503_SERVICE_UNAVAILABLE, "unavailable"),
)


@dataclass(frozen=True)
class Problem:
    status: int
    code: str
    detail: str
    fields: dict[str, list[str]] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict:
        body: dict = {"status": self.status, "code": self.code, "detail": self.detail}
        if self.fields:
            body["fields"] = self.fields
        return body


def _configured_namesrv_addrs() -> tuple[str, ...]:
    """The name servers of the current name-server set (console.namesrv_scope; settings.MQ["NAMESRV_ADDR"]
    for ``default``), empty when the setting is unusable."""
    try:
        return parse_namesrv_addrs(getattr(namesrv_scope.get(), "namesrv_addr", None) or settings.MQ["NAMESRV_ADDR"])
    except ValueError:
        return ()


def _is_namesrv_failure(exc: RemotingError) -> bool:
    addr = getattr(exc, "addr", None) or ""
    return str(exc).startswith("no name server answered") or bool(
        set(addr.split(";")) & set(_configured_namesrv_addrs())
    )


def _engine_problem(exc: RemotingError) -> Problem:
    if isinstance(exc, (RemotingConnectError, RemotingTimeoutError)):
        if _is_namesrv_failure(exc):
            return Problem(503, "namesrv_unreachable", f"name server unreachable: {exc}")
        addr = getattr(exc, "addr", None)
        where = f"broker {addr}" if addr else "broker"
        return Problem(503, "broker_unreachable", f"{where} unreachable: {exc}")
    if isinstance(exc, MQClientError) and exc.code == CLIENT_ERROR:
        return Problem(400, "rejected", str(exc))
    if isinstance(exc, MQClientError):
        status, code = next(
            ((status, code) for cls, status, code in _BROKER_ERRORS if isinstance(exc, cls)),
            (http.HTTP_502_BAD_GATEWAY, "broker_error"),
        )
        return Problem(status, code, str(exc))
    return Problem(502, "broker_error", f"unexpected answer from the cluster: {exc}")


def problem_for(exc: BaseException) -> Problem | None:
    """The HTTP meaning of ``exc``, or None when it is not one this module knows (a bug: 500)."""
    if isinstance(exc, InvalidInput):
        return Problem(400, exc.code, exc.message, exc.fields)
    if isinstance(exc, ServiceError):
        return Problem(exc.status, exc.code, exc.message)
    if isinstance(exc, InvalidNameError):
        return Problem(400, "invalid", f"name: {exc}", {"name": [str(exc)]})
    if isinstance(exc, InvalidTopicConfigError):
        return Problem(400, "invalid", str(exc))
    if isinstance(exc, RemotingError):
        return _engine_problem(exc)
    return None


# -- the API ---------------------------------------------------------------------------------------


def flatten_errors(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail as ``{"dotted.path": [reasons]}``."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            for k, v in flatten_errors(value, path).items():
                out.setdefault(k, []).extend(v)
    elif isinstance(detail, list):
        if all(not isinstance(d, (dict, list)) for d in detail):
            out[prefix or "non_field_errors"] = [str(d) for d in detail]
        else:
            for i, value in enumerate(detail):
                for k, v in flatten_errors(value, f"{prefix}.{i}" if prefix else str(i)).items():
                    out.setdefault(k, []).extend(v)
    else:
        out[prefix or "non_field_errors"] = [str(detail)]
    return out


def _drf_problem(exc: drf_exceptions.APIException) -> Problem:
    headers: dict[str, str] = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(exc.wait))
    if isinstance(exc, drf_exceptions.ValidationError):
        fields = flatten_errors(exc.detail)
        first = next(iter(fields.items()))
        detail = f"{first[0]}: {first[1][0]}" if first[0] != "non_field_errors" else first[1][0]
        return Problem(400, "invalid", detail, fields, headers)
    code = exc.get_codes() if isinstance(exc.get_codes(), str) else exc.default_code
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    return Problem(exc.status_code, str(code), str(detail), None, headers)


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's EXCEPTION_HANDLER: every known error as a JSON problem; unknown ones stay 500."""
    problem: Problem | None
    if isinstance(exc, Http404):
        problem = Problem(404, "not_found", str(exc) or "not found")
    elif isinstance(exc, PermissionDenied):
        problem = Problem(403, "permission_denied", str(exc) or "you may not do this")
    elif isinstance(exc, drf_exceptions.APIException):
        problem = _drf_problem(exc)
    else:
        problem = problem_for(exc)
        if problem is None:
            return None
        if problem.status >= 500:
            log.warning("%s %s: %s", context["request"].method, context["request"].path, problem.detail)
    return Response(problem.as_json(), status=problem.status, headers=problem.headers)

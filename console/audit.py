"""The audit log: who changed what, when, from what to what, and whether it worked.

Every service that changes the cluster or the console's users writes one entry, through
:func:`audited` (the usual way) or :func:`record_audit`::

    def topic_delete(*, actor: Actor, name: str) -> TopicDeletion:
        actor.require(Role.OPERATOR)
        with audited(actor=actor, action="topic.delete", target_type="topic", target=name) as note:
            note.before = current_state(...)      # what it was (JSON-able)
            ...                                  # refuse bad input, then change things
            note.after = new_state(...)          # what it is now
        return ...

Who got in and who was turned away is recorded too, without an Actor: :func:`record_access`
(logins and failed logins, by signal: console.login_audit) and :func:`record_refusal` (requests
the role checks refuse with 403: console.permissions).

Each entry names the web request that made it (``request_id``, console.request_id; empty for a
change made by a task or a command outside any request).

The entry is written when the block ends: ``ok`` when it ended normally, ``failed`` with the
error's text as the reason when an exception left it (the exception goes on). Call ``audited``
outside any ``transaction.atomic`` block that may roll back, or the failed entry goes with it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from console.actor import Actor, client_ip
from console.models import AuditEntry
from console.request_id import current_request_id
from console.roles import role_of

MAX_REASON = 2000  # characters kept of an error's text


def _jsonable(value: Any) -> Any:
    """Dataclasses, enums, tuples and datetimes made JSON-able (the audit JSONFields)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    return value


def record_audit(
    *,
    actor: Actor,
    action: str,
    target_type: str,
    target: str,
    before: Any = None,
    after: Any = None,
    ok: bool = True,
    reason: str = "",
) -> AuditEntry:
    """Write one audit entry and return it."""
    return AuditEntry.objects.create(
        actor=actor.username,
        actor_role=actor.role.value,
        source=actor.source,
        ip=actor.ip,
        action=action,
        target_type=target_type,
        target=target[:255],
        before=_jsonable(before),
        after=_jsonable(after),
        result=AuditEntry.OK if ok else AuditEntry.FAILED,
        reason=reason[:MAX_REASON],
        request_id=current_request_id() or "",
    )


def record_access(
    *,
    username: str,
    role: str,
    source: str,
    ip: str | None,
    action: str,
    target_type: str,
    target: str,
    ok: bool,
    reason: str = "",
) -> AuditEntry:
    """Write who got in or was turned away, where no Actor acts: logins, failed logins (``role`` is
    "" for a username that has none) and requests refused by the role checks. Never a password."""
    return AuditEntry.objects.create(
        actor=username[:150],
        actor_role=role,
        source=source,
        ip=ip,
        action=action,
        target_type=target_type,
        target=target[:255],
        result=AuditEntry.OK if ok else AuditEntry.FAILED,
        reason=reason[:MAX_REASON],
        request_id=current_request_id() or "",
    )


def record_refusal(request, *, needed: str, reason: str) -> AuditEntry:
    """Audit a request the role checks refused (a 403): who, from where, which method and path, what it needed."""
    role = role_of(request.user)
    return record_access(
        username=request.user.get_username(),
        role=role.value if role is not None else "",
        source="api" if request.path.startswith("/api/") else "console",
        ip=client_ip(request),
        action="access.denied",
        target_type="url",
        target=f"{request.method} {request.path}",
        ok=False,
        reason=f"needs the {needed} role: {reason}",
    )


@dataclass
class AuditNote:
    """What the service fills in while it works: the state before and after the change."""

    before: Any = None
    after: Any = None
    reason: str = ""  # an extra note for an ok entry (a failed entry's reason is the error)


def describe_failure(exc: BaseException) -> str:
    """The reason recorded for a failed change: the same text the HTTP answer carries."""
    from console.http_errors import problem_for  # the one mapping of errors to HTTP

    problem = problem_for(exc)
    if problem is None:
        return f"{type(exc).__name__}: {exc}"
    return problem.detail


@contextmanager
def audited(*, actor: Actor, action: str, target_type: str, target: str, before: Any = None) -> Iterator[AuditNote]:
    """Record an audit entry for the block: ok when it ends, failed (with the reason) when it raises."""
    note = AuditNote(before=before)
    try:
        yield note
    except Exception as exc:
        record_audit(
            actor=actor,
            action=action,
            target_type=target_type,
            target=target,
            before=note.before,
            after=note.after,
            ok=False,
            reason=describe_failure(exc),
        )
        raise
    record_audit(
        actor=actor,
        action=action,
        target_type=target_type,
        target=target,
        before=note.before,
        after=note.after,
        ok=True,
        reason=note.reason,
    )

"""Errors that services raise for the two front doors to turn into HTTP (console.http_errors).

A service refuses input with :class:`InvalidInput` naming the field (dotted for nested fields,
``brokers.broker-a.read_queue_nums``) before it changes anything; the API answers 400 with the
field, the console form shows the reason under the field.
"""

from __future__ import annotations


class ServiceError(Exception):
    """Base of the errors services raise on purpose; ``status`` is the HTTP status it means."""

    status = 500
    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(ServiceError):
    """The input is refused; ``fields`` maps field names to reasons."""

    status = 400
    code = "invalid"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.fields: dict[str, list[str]] = {field: [reason]}

    def add_to_form(self, form) -> None:
        """Show the reasons under the form's fields (or at its top for fields it lacks)."""
        for field, reasons in self.fields.items():
            name = field if field in form.fields else None
            for reason in reasons:
                form.add_error(name, reason if name else f"{field}: {reason}")


class NotFound(ServiceError):
    status = 404
    code = "not_found"


class Conflict(ServiceError):
    status = 409
    code = "conflict"


class Forbidden(ServiceError):
    status = 403
    code = "permission_denied"


class Unavailable(ServiceError):
    status = 503
    code = "unavailable"


class NamesrvUnreachable(Unavailable):
    code = "namesrv_unreachable"


def show_on_form(form, exc: ServiceError) -> None:
    """Show a service's refusal on a console form: under the field it names, else at the top."""
    if isinstance(exc, InvalidInput):
        exc.add_to_form(form)
    else:
        form.add_error(None, exc.message)


class QueueUnavailable(Unavailable):
    """Background work could not be queued: Redis (Celery's broker) does not answer."""

    code = "queue_unavailable"


NOT_BOTH_TARGETS = "give a cluster or a broker, not both."


def one_target(cluster: str | None, broker: str | None) -> None:
    """A change goes to every master of a cluster or to one broker: InvalidInput on ``broker`` when both are named."""
    if cluster is not None and broker is not None:
        raise InvalidInput("broker", NOT_BOTH_TARGETS)

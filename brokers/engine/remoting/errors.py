"""Errors raised by the remoting layer.

Callers catch :class:`RemotingError` for "the call did not produce a usable response", or one
subclass when they react differently (a timeout is retried, a refused connection marks the peer
down).  :class:`ResponseError` is for callers that turn a non-success response code into an
exception; the transport never raises it by itself.
"""

from __future__ import annotations

from typing import Protocol, TypeVar


class RemotingError(Exception):
    """Base of every remoting failure."""


class RemotingConnectError(RemotingError, ConnectionError):
    """The peer could not be reached, or the connection closed before the response arrived."""

    def __init__(self, message: str, addr: str | None = None) -> None:
        super().__init__(message)
        self.addr = addr


class RemotingTimeoutError(RemotingError, TimeoutError):
    """No response within the caller's timeout."""

    def __init__(self, message: str, addr: str | None = None, timeout_s: float | None = None) -> None:
        super().__init__(message)
        self.addr = addr
        self.timeout_s = timeout_s


class RemotingSendRequestError(RemotingError):
    """Writing the request to the connection failed."""

    def __init__(self, message: str, addr: str | None = None) -> None:
        super().__init__(message)
        self.addr = addr


class RemotingProtocolError(RemotingError):
    """A frame or header that does not follow the protocol.

    ``opaque`` is the request id when it could be recovered (so the error can be answered to the
    right request), ``fatal`` is True when the byte stream can no longer be trusted to be in step
    (the connection must be closed).
    """

    def __init__(self, message: str, *, opaque: int | None = None, flag: int = 0, fatal: bool = False) -> None:
        super().__init__(message)
        self.opaque = opaque
        self.flag = flag
        self.fatal = fatal


class RemotingTooLargeError(RemotingProtocolError):
    """A frame longer than the frame limit (16 MiB by default)."""

    def __init__(self, size: int, limit: int, *, opaque: int | None = None, flag: int = 0) -> None:
        super().__init__(f"frame of {size} bytes exceeds the {limit}-byte limit", opaque=opaque, flag=flag)
        self.size = size
        self.limit = limit


class RemotingBodyTooLargeError(RemotingProtocolError):
    """A request whose body is over its code's limit, refused from its header before the body is read.

    Fatal: the unread body leaves the stream out of step, so the connection is answered and closed."""

    def __init__(
        self, code: int, size: int, limit: int, setting: str, *, opaque: int | None = None, flag: int = 0
    ) -> None:
        super().__init__(
            f"request code {code}: body of {size} bytes exceeds the limit of {limit} ({setting}); "
            "connection closed without reading it",
            opaque=opaque,
            flag=flag,
            fatal=True,
        )
        self.code = code
        self.size = size
        self.limit = limit


class RemotingCommandError(RemotingError, ValueError):
    """A request's custom header misses a required field or holds an unparsable value.

    The message names the field; a server answers it as SYSTEM_ERROR with that message as remark.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class ResponseError(RemotingError):
    """A response whose code is not one the caller accepts; carries the code and remark."""

    def __init__(
        self, code: int, remark: str | None, *, request_code: int | None = None, addr: str | None = None
    ) -> None:
        self.code = int(code)
        self.remark = remark
        self.request_code = request_code
        self.addr = addr
        super().__init__(self._describe())

    def _describe(self) -> str:
        from brokers.engine.remoting.codes import ResponseCode

        try:
            name = ResponseCode(self.code).name
        except ValueError:
            name = "UNKNOWN"
        where = f" from {self.addr}" if self.addr else ""
        what = f" to request {self.request_code}" if self.request_code is not None else ""
        text = f"response code {self.code} ({name}){what}{where}"
        return f"{text}: {self.remark}" if self.remark else text


class _Response(Protocol):
    """A RemotingCommand as expect_code reads it (command.py imports this module, so not the class itself)."""

    @property
    def code(self) -> int: ...
    @property
    def remark(self) -> str | None: ...


_R = TypeVar("_R", bound=_Response)


def expect_code(response: _R, *codes: int, addr: str | None = None, request_code: int | None = None) -> _R:
    """Return ``response`` if its code is one of ``codes`` (default: SUCCESS), else raise ResponseError."""
    accepted = codes or (0,)
    if response.code in accepted:
        return response
    raise ResponseError(response.code, response.remark, request_code=request_code, addr=addr)

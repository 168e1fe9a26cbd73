"""The errors of client calls: MQClientError and its subclass MQBrokerError.

Both are :class:`~brokers.engine.remoting.errors.RemotingError` subclasses (through
ResponseError), so ``except RemotingError`` catches every failure of a call, transport ones
(RemotingConnectError, RemotingTimeoutError) included. ``str()`` of an error is a sentence for
an operator: what the response code means, where it came from, and the server's remark.
"""

from __future__ import annotations

from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.errors import ResponseError

__all__ = ["CLIENT_ERROR", "MQBrokerError", "MQClientError"]

CLIENT_ERROR = -1  # code of failures detected on the client side (MQClientException's -1)

_FRIENDLY = {
    ResponseCode.SYSTEM_ERROR: "the server failed to process the request",
    ResponseCode.SYSTEM_BUSY: "the server is busy, try again later",
    ResponseCode.REQUEST_CODE_NOT_SUPPORTED: "the server does not support this request",
    ResponseCode.FLUSH_DISK_TIMEOUT: "stored, but the disk flush was not confirmed in time",
    ResponseCode.SLAVE_NOT_AVAILABLE: "stored, but no slave is available",
    ResponseCode.FLUSH_SLAVE_TIMEOUT: "stored, but the slave did not confirm in time",
    ResponseCode.MESSAGE_ILLEGAL: "the message is illegal (too large, or bad properties)",
    ResponseCode.SERVICE_NOT_AVAILABLE: "the broker's store is not writable",
    ResponseCode.NO_PERMISSION: "no permission for this operation on the broker or topic",
    ResponseCode.TOPIC_NOT_EXIST: "the topic does not exist",
    ResponseCode.TOPIC_EXIST_ALREADY: "the topic exists already",
    ResponseCode.QUERY_NOT_FOUND: "nothing found",
    ResponseCode.SUBSCRIPTION_PARSE_FAILED: "the subscription expression does not parse",
    ResponseCode.SUBSCRIPTION_NOT_EXIST: "the group has no subscription for this topic",
    ResponseCode.SUBSCRIPTION_NOT_LATEST: "the subscription is not the latest",
    ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST: "the consumer group does not exist",
    ResponseCode.CONSUMER_NOT_ONLINE: "the consumer group is not online",
    ResponseCode.CONSUME_MSG_TIMEOUT: "the consumer did not answer in time",
    ResponseCode.FLOW_CONTROL: "flow control, try again later",
}


class MQClientError(ResponseError):
    """An admin or client call failed; ``code`` is a response code, or -1 for a client-side check.

    A subclass of RemotingError, so ``except RemotingError`` catches every failure of a call.
    """

    def __init__(
        self, code: int, remark: str | None, *, request_code: int | None = None, addr: str | None = None
    ) -> None:
        super().__init__(code, remark, request_code=request_code, addr=addr)

    @property
    def code_name(self) -> str:
        try:
            return ResponseCode(self.code).name
        except ValueError:
            return "CLIENT_ERROR" if self.code == CLIENT_ERROR else "UNKNOWN"

    def _describe(self) -> str:
        if self.code == CLIENT_ERROR:
            return self.remark or "client error"
        friendly = _FRIENDLY.get(self.code, "the request failed")  # type: ignore[call-overload]
        where = f" at {self.addr}" if self.addr else ""
        remark = f": {self.remark.strip()}" if self.remark and self.remark.strip() else ""
        return f"{friendly} ({self.code_name}, code {self.code}){where}{remark}"

    def __str__(self) -> str:
        return self._describe()


class MQBrokerError(MQClientError):
    """A name server or broker answered with a non-success code."""

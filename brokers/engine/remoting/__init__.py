"""The RocketMQ 4.x remoting protocol: commands and frames, asyncio server and client."""

from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import (
    RemotingCommandError,
    RemotingConnectError,
    RemotingError,
    RemotingProtocolError,
    RemotingSendRequestError,
    RemotingTimeoutError,
    RemotingTooLargeError,
    RemotingBodyTooLargeError,
    ResponseError,
    expect_code,
)

__all__ = [
    "RemotingCommand",
    "RemotingCommandError",
    "RemotingConnectError",
    "RemotingError",
    "RemotingProtocolError",
    "RemotingSendRequestError",
    "RemotingTimeoutError",
    "RemotingTooLargeError",
    "RemotingBodyTooLargeError",
    "RequestCode",
    "ResponseCode",
    "ResponseError",
    "expect_code",
]

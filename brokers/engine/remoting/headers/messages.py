"""Message lookups: by key through the index, by commit log offset."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.base import RequestHeader, wire

__all__ = ["QueryMessageRequestHeader", "ViewMessageRequestHeader"]


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryMessageRequestHeader(RequestHeader):
    """QUERY_MESSAGE (12): up to ``max_num`` messages of ``topic`` whose keys hold ``key``, stored
    within ``begin_timestamp``..``end_timestamp`` (ms). ``unique_key_query`` is the extra field
    ``_UNIQUE_KEY_QUERY`` RocketMQ's client adds when it looks a message id (UNIQ_KEY) up."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.QUERY_MESSAGE,)

    topic: str
    key: str
    max_num: int
    begin_timestamp: int
    end_timestamp: int
    unique_key_query: bool = field(default=False, metadata=wire("_UNIQUE_KEY_QUERY"))


@dataclass(frozen=True, slots=True, kw_only=True)
class ViewMessageRequestHeader(RequestHeader):
    """VIEW_MESSAGE_BY_ID (33): the record at commit log ``offset``."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.VIEW_MESSAGE_BY_ID,)

    offset: int

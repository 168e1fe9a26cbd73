"""Request headers as typed classes, shared by the clients that build them and the processors that read them.

A RocketMQ request carries its parameters as a custom header (``extFields``, string to string).
Each header here is a frozen dataclass (:class:`~.base.RequestHeader`) declaring its fields
under RocketMQ's exact camelCase wire names, their types (str, int, bool, optional) and which
are required; a client sends ``Call(code, Header(...).encode())``, a processor reads
``Header.decode(request)``, which refuses a missing required field or an unparsable number with
a RemotingCommandError naming the field (answered SYSTEM_ERROR with that remark). Apache's
clients and mqadmin send the same names, so they are read the same way. How to add one:
docs/protocol.md, "Request headers".

Modules by noun: :mod:`.topics`, :mod:`.groups`, :mod:`.offsets`, :mod:`.messages`, :mod:`.consume`,
:mod:`.produce`.

Converted (client and server both use the class):

- topics: UPDATE_AND_CREATE_TOPIC (17), DELETE_TOPIC_IN_BROKER (215), DELETE_TOPIC_IN_NAMESRV
  (216), GET_TOPIC_STATS_INFO (202), GET_ROUTEINFO_BY_TOPIC (105);
- groups: DELETE_SUBSCRIPTIONGROUP (207), GET_CONSUME_STATS (208), GET_CONSUMER_CONNECTION_LIST
  (203), GET_CONSUMER_RUNNING_INFO (307); UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) has a body
  and no header;
- offsets: QUERY_CONSUMER_OFFSET (14), UPDATE_CONSUMER_OFFSET (15), SEARCH_OFFSET_BY_TIMESTAMP
  (29), GET_MAX_OFFSET (30), GET_MIN_OFFSET (31), GET_EARLIEST_MSG_STORETIME (32),
  INVOKE_BROKER_TO_RESET_OFFSET (222);
- messages: QUERY_MESSAGE (12), VIEW_MESSAGE_BY_ID (33);
- consume: PULL_MESSAGE (11), LITE_PULL_MESSAGE (361), POP_MESSAGE (200050), ACK_MESSAGE (200051),
  CHANGE_MESSAGE_INVISIBLETIME (200053);
- produce: SEND_MESSAGE (10), SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE (320), one-letter keys.

Not yet converted (still string-keyed dicts and ``require_str``/``optional_int``): BATCH_ACK_MESSAGE
(200151) and HEART_BEAT (34) carry bodies, not headers; CONSUMER_SEND_MSG_BACK (36); the name
server's registration and KV codes; the ACL, store and Gantry-specific admin codes; and the
broker-to-client pushes (NOTIFY_CONSUMER_IDS_CHANGED, RESET_CONSUMER_CLIENT_OFFSET,
CONSUME_MESSAGE_DIRECTLY).
"""

from __future__ import annotations

from brokers.engine.remoting.headers.base import HeaderField as HeaderField
from brokers.engine.remoting.headers.base import RequestHeader as RequestHeader
from brokers.engine.remoting.headers.base import header_fields as header_fields
from brokers.engine.remoting.headers.base import wire as wire

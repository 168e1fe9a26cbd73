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
:mod:`.produce`, :mod:`.brokers`, :mod:`.acl`, :mod:`.replication`, :mod:`.pushes`, :mod:`.namesrv`.

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
  CHANGE_MESSAGE_INVISIBLETIME (200053), CONSUMER_SEND_MSG_BACK (36);
- produce: SEND_MESSAGE (10), SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE (320), one-letter keys;
- brokers: UNREGISTER_CLIENT (35), GET_CONSUMER_LIST_BY_GROUP (38), GET_PRODUCER_CONNECTION_LIST
  (204), GET_BROKER_CONSUME_STATS (317), QUERY_TOPIC_CONSUME_BY_WHO (300), GET_TOPIC_CONFIG (351),
  GET_SUBSCRIPTIONGROUP_CONFIG (352);
- acl: UPDATE_AND_CREATE_ACL_CONFIG (50), DELETE_ACL_CONFIG (51), UPDATE_GLOBAL_WHITE_ADDRS_CONFIG
  (53); an empty ``topicPerms`` or ``globalWhiteAddrs`` is a value (``empty_is_a_value``); the ACL
  reads (52, 10006) carry no header;
- replication (Gantry's own codes): GANTRY_PROMOTE_SLAVE (10004), GANTRY_SUBSCRIBE_CONFIG (10007),
  GANTRY_GET_POP_STATE (10010), GANTRY_NOTIFY_CONSUMER_IDS_CHANGED (10003);
- pushes (broker to client): NOTIFY_CONSUMER_IDS_CHANGED (40), RESET_CONSUMER_CLIENT_OFFSET (220),
  CONSUME_MESSAGE_DIRECTLY (309, also an admin's to the broker, which forwards it);
- namesrv: REGISTER_BROKER (103), UNREGISTER_BROKER (104), QUERY_DATA_VERSION (322),
  BROKER_HEARTBEAT (904), GET_BROKER_MEMBER_GROUP (901), REGISTER_TOPIC_IN_NAMESRV (217),
  GET_TOPICS_BY_CLUSTER (224), WIPE_WRITE_PERM_OF_BROKER (205), ADD_WRITE_PERM_OF_BROKER (327),
  PUT_KV_CONFIG (100), GET_KV_CONFIG (101), DELETE_KV_CONFIG (102), GET_KVLIST_BY_NAMESPACE (219);
  the answers of 103, 322, 205, 327 and 101 have typed response-header classes.

Not yet converted: none of the requests that carry a header. BATCH_ACK_MESSAGE (200151) and
HEART_BEAT (34) carry bodies, not headers; so do the store and Gantry admin codes without
parameters (GET_BROKER_RUNTIME_INFO, GET_ALL_TOPIC_CONFIG, ...), which send an empty header.
"""

from __future__ import annotations

from brokers.engine.remoting.headers.base import HeaderField as HeaderField
from brokers.engine.remoting.headers.base import RequestHeader as RequestHeader
from brokers.engine.remoting.headers.base import header_fields as header_fields
from brokers.engine.remoting.headers.base import wire as wire

"""Names, defaults and limits shared by the name server, brokers and clients.

Each default carries its reason; values are RocketMQ 4.9.x's unless said otherwise.
"""

from __future__ import annotations

# Version ordinal of MQVersion.Version.V4_9_8; sent in every request and response header
# (Java clients record the HEART_BEAT response version as the broker's version).
MQ_VERSION = 409
MQ_VERSION_NAME = "V4_9_8"
# The name server answers standard JSON routes to requests with version >= V4_9_4.
VERSION_STANDARD_JSON = 401
LANGUAGE = "PYTHON"

DEFAULT_CLUSTER = "DefaultCluster"
MASTER_ID = 0
DEFAULT_NAMESRV_PORT = 9876
DEFAULT_BROKER_PORT = 10911

# Topic auto-creation template (RocketMQ's TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC).
AUTO_CREATE_TOPIC_KEY_TOPIC = "TBW102"
DEFAULT_TOPIC_QUEUE_NUMS = 4  # producer's defaultTopicQueueNums
BROKER_DEFAULT_TOPIC_QUEUE_NUMS = 8  # broker's defaultTopicQueueNums (TBW102 queues)

RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
DLQ_GROUP_TOPIC_PREFIX = "%DLQ%"
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
SELF_TEST_TOPIC = "SELF_TEST_TOPIC"
BENCHMARK_TOPIC = "BenchmarkTest"
OFFSET_MOVED_EVENT = "OFFSET_MOVED_EVENT"
RMQ_SYS_TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
RMQ_SYS_TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
RMQ_SYS_TRANS_OP_HALF_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
# The system-topic sets and the name limits live in brokers.engine.common.topic_validator.
MAX_QUEUE_NUMS = 1024  # upper bound we accept for read/write queue numbers (a setting-free sanity limit)
MAX_MESSAGE_SIZE = 4 * 1024 * 1024  # broker maxMessageSize, 4 MiB
MAX_PROPERTIES_SIZE = 32767  # properties length is a signed short in the record
MAX_FRAME_SIZE = 16 * 1024 * 1024  # remoting frameMaxLength

MAX_RECONSUME_TIMES = 16

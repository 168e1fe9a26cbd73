"""What the OpenAPI schema says about names, and the example values it shows.

The patterns and lengths come from the one naming rule, RocketMQ's TopicValidator
(:mod:`brokers.engine.common.topic_validator`): its allowed characters and maximum lengths are turned
into a JSON-schema ``pattern`` here, never written out a second time. The examples are RocketMQ's
quick-start names (``TopicTest``, ``please_rename_unique_group_name``, ``broker-a``,
``DefaultCluster``), so a generated client or a fuzzer sent against a quick-start cluster names things
that exist (tests/console/test_schema_fuzz.py runs against such a cluster).
"""

from __future__ import annotations

import re

from brokers.engine.common.topic_validator import GROUP_MAX_LENGTH, TOPIC_MAX_LENGTH, VALID_CHARS

EXAMPLE_TOPIC = "TopicTest"  # the quick-start's topic (RocketMQ's example Producer)
EXAMPLE_GROUP = "please_rename_unique_group_name"  # the quick-start's consumer group
EXAMPLE_BROKER = "broker-a"  # broker.conf's brokerName
EXAMPLE_CLUSTER = "DefaultCluster"  # broker.conf's brokerClusterName

_CHAR_CLASS = "[" + "".join(re.escape(ch) if ch in "-|\\]^" else ch for ch in sorted(VALID_CHARS)) + "]"


def name_pattern(max_length: int) -> str:
    """A JSON-schema pattern (ECMA 262) matching the names the rule accepts, 1 to ``max_length`` characters."""
    return f"^{_CHAR_CLASS}{{1,{max_length}}}$"


TOPIC_NAME_PATTERN = name_pattern(TOPIC_MAX_LENGTH)
GROUP_NAME_PATTERN = name_pattern(GROUP_MAX_LENGTH)

"""One table of topic names and RocketMQ's answer to ``updateTopic`` for each (4.9.x and 5.x agree).

Shared by the pure checks (test_topic_validator.py) and the front-door test
(tests/topics/test_topic_name_front_doors.py), which sends every name through the broker,
``mqadmin updateTopic``, the console form and ``POST /api/v1/topics``.

Facts from apache/rocketmq: ``TopicValidator.validateTopic`` (blank, ``^[%|a-zA-Z0-9_-]+$`` on
each UTF-16 char, at most 127) then ``isSystemTopic`` (the fixed set, the ``rmq_sys_`` prefix,
and the names each broker adds at start-up: its cluster, ``<cluster>_REPLY_TOPIC``, its broker
name). Retry and DLQ topics are ordinary names. The cluster rows use the test cluster's names.

A broker knows only its own name: RocketMQ's broker-a creates a topic named ``broker-b``, which
the console refuses (it sees the whole cluster), so the table has no row for another broker's
name; the front-door test sends raw requests to the first broker.
"""

from __future__ import annotations

from dataclasses import dataclass

CLUSTER = "GantryTestCluster"  # tests.brokers.engine.client._cluster.CLUSTER, the session cluster's name
BROKERS = ("broker-a", "broker-b")
ACCEPT, REFUSE = "accept", "refuse"


@dataclass(frozen=True)
class Row:
    name: str
    answer: str  # ACCEPT or REFUSE: what updateTopic says
    why: str


def _rows() -> tuple[Row, ...]:
    accept = [
        ("Orders", "plain letters"),
        ("a", "one character"),
        ("A-b_9", "every punctuation the rule allows"),
        ("a|b", "| is allowed"),
        ("%", "% alone is allowed"),
        ("100", "digits only"),
        ("_", "underscore alone"),
        ("-lead", "a leading dash"),
        ("x" * 126, "126 characters"),
        ("x" * 127, "127 characters, the limit"),
        ("%RETRY%billing", "a retry topic: an admin may create it"),
        ("%DLQ%billing", "a DLQ topic: an admin may create it"),
        ("%RETRY%" + "g" * 120, "a retry topic of 127 characters"),
        ("%RETRY%%DLQ%g", "nested prefixes are still legal characters"),
        ("rmq_sysX", "looks like the prefix but is not it"),
        ("RMQ_SYS_x", "the prefix is case-sensitive"),
        ("tbw102", "the system set is case-sensitive"),
        ("TBW1020", "TBW102 plus a character is not TBW102"),
        ("SCHEDULE_TOPIC_XXXY", "not the schedule topic"),
        ("BenchmarkTest2", "not the benchmark topic"),
        ("REVIVE_LOG", "5.x revive topics carry the rmq_sys_ prefix; without it the name is free"),
        ("wheel_timer", "likewise the timer topic without its prefix"),
        ("broker-c", "a broker name no broker of this cluster has"),
        ("OtherCluster", "a cluster name not of this cluster"),
        ("broker", "a prefix of the broker names"),
        ("OtherCluster_REPLY_TOPIC", "the reply topic of a cluster not here"),
        ("REPLY_TOPIC", "the reply postfix alone"),
    ]
    refuse = [
        ("", "empty (blank)"),
        (" ", "a space alone (blank)"),
        ("a b", "a space"),
        (" lead", "a leading space"),
        ("trail ", "a trailing space"),
        ("a\tb", "a tab"),
        ("abc\n", "a trailing newline"),
        ("a\r\nb", "CR LF"),
        ("a\x00b", "NUL"),
        ("a/b", "a slash"),
        ("..", "dot dot"),
        ("../etc", "a path"),
        ("a.b", "a dot"),
        ("a:b", "a colon"),
        ("a,b", "a comma"),
        ("a;b", "a semicolon"),
        ("a*b", "a star"),
        ("a+b", "a plus"),
        ("a#b", "a hash"),
        ("a@b", "an at sign"),
        ("a\\b", "a backslash"),
        ("１２３", "full-width digits"),
        ("ünicode", "a Latin-1 letter"),
        ("zażółć", "Polish letters"),
        ("主题", "CJK"),
        ("Topic\u200b", "a zero-width space"),
        ("emoji\U0001f600", "a character beyond U+FFFF"),
        ("Ａ", "a full-width letter"),
        ("x" * 128, "128 characters, one over"),
        ("x" * 300, "far too long"),
        ("%RETRY%" + "g" * 121, "a retry topic of 128 characters (4.9/5.3 keep 127 for these too)"),
        ("TBW102", "4.9/5.x system: AUTO_CREATE_TOPIC_KEY_TOPIC"),
        ("SCHEDULE_TOPIC_XXXX", "4.9/5.x system: RMQ_SYS_SCHEDULE_TOPIC"),
        ("BenchmarkTest", "4.9/5.x system: RMQ_SYS_BENCHMARK_TOPIC"),
        ("RMQ_SYS_TRANS_HALF_TOPIC", "4.9/5.x system"),
        ("RMQ_SYS_TRACE_TOPIC", "4.9/5.x system"),
        ("RMQ_SYS_TRANS_OP_HALF_TOPIC", "4.9/5.x system"),
        ("TRANS_CHECK_MAX_TIME_TOPIC", "4.9/5.x system: RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC"),
        ("SELF_TEST_TOPIC", "4.9/5.x system: RMQ_SYS_SELF_TEST_TOPIC"),
        ("OFFSET_MOVED_EVENT", "4.9/5.x system: RMQ_SYS_OFFSET_MOVED_EVENT"),
        ("CHECKPOINT_TOPIC", "5.2+ system: RMQ_SYS_ROCKSDB_OFFSET_TOPIC"),
        ("rmq_sys_", "the system prefix alone"),
        ("rmq_sys_anything", "the system prefix"),
        (f"rmq_sys_REVIVE_LOG_{CLUSTER}", "5.x system: the pop revive topic"),
        ("rmq_sys_wheel_timer", "5.x system: the timer topic"),
        ("rmq_sys_SYNC_BROKER_MEMBER_broker-a", "5.x system: SYNC_BROKER_MEMBER_GROUP_PREFIX"),
        ("rmq_sys_TRACE_DATA_x", "5.x system: the trace topic prefix"),
        ("rmq_sys_INDEX", "5.x system: the tiered store index topic"),
        (CLUSTER, "the cluster's name: each broker adds it to the system set"),
        (f"{CLUSTER}_REPLY_TOPIC", "the cluster's reply topic"),
        (BROKERS[0], "the name of the broker asked"),
    ]
    return tuple(Row(n, ACCEPT, w) for n, w in accept) + tuple(Row(n, REFUSE, w) for n, w in refuse)


TOPIC_NAMES: tuple[Row, ...] = _rows()
assert len(TOPIC_NAMES) >= 60 and len({r.name for r in TOPIC_NAMES}) == len(TOPIC_NAMES)


def row_id(row: Row) -> str:
    """A readable pytest id: the name escaped, shortened when long."""
    text = row.name.encode("unicode_escape").decode("ascii") or "<empty>"
    return f"{row.answer}-{text[:24]}{'...' + str(len(row.name)) if len(text) > 24 else ''}"

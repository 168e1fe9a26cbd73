"""Consumer API serializers: strict inputs (unknown fields, wrong types and bad values refused,
the field named) and outputs rendering the selectors' dataclasses.

Shapes scripts rely on::

    POST /api/v1/allocation/preview
    {"strategy": "AVG", "params": {...},
     "topic": "Orders" | "queues": [{"topic": "Orders", "broker_name": "broker-a", "queue_id": 0}, ...],
     "group": "OrderConsumers" | "cids": ["c1", "c2"],
     "current": {"c1": [queue, ...]},                                      (optional: what-if)
     "scenario": {"add_consumers": [], "remove_consumers": [], "brokers_down": [], "queue_counts": {"broker-a": 4}}}
    -> {"strategy", "assignments": {cid: [queue, ...]}, "owners": {"<topic>/<broker>/<queue id>": [cid, ...]},
        "balance", "idle": [cid], "unassigned": [queue], "shared": [...], "moved": {...} (what-if only)}
"""

from __future__ import annotations

from collections.abc import Callable

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from console.errors import InvalidInput
from console.query_filters import ChoiceSetField
from console.rest import StrictCharField, StrictInputSerializer, StrictIntegerField
from console.times import TIME_SCHEMA
from consumers import rules
from consumers.allocation_schema import allocation_rules, params_schema, strategy_branch
from consumers.allocation import AllocationPreview, MovementDiff, Scenario
from consumers.previews import CompareResult, PreviewResult
from consumers.types import GROUP_KINDS

# -- pieces ----------------------------------------------------------------------------------------------


def _refusal(exc: InvalidInput) -> serializers.ValidationError:
    return serializers.ValidationError(exc.fields)


class TimeField(serializers.Field):
    """A time: milliseconds since the epoch (JSON integer or digits) or ISO 8601 text."""

    def to_internal_value(self, data) -> int:
        try:
            return rules.parse_time_ms(data, self.field_name)
        except InvalidInput as exc:
            raise serializers.ValidationError(exc.fields[self.field_name][0]) from None

    def to_representation(self, value):
        return value


extend_schema_field(TIME_SCHEMA)(TimeField)


class QueueSerializer(serializers.Serializer):
    topic = serializers.CharField()
    broker_name = serializers.CharField()
    queue_id = serializers.IntegerField()


def queue_json(mq) -> dict:
    return {"topic": mq.topic, "broker_name": mq.broker_name, "queue_id": mq.queue_id}


def queue_key(mq) -> str:
    return f"{mq.topic}/{mq.broker_name}/{mq.queue_id}"


# -- groups ----------------------------------------------------------------------------------------------


class GroupListQuery(serializers.Serializer):
    search = serializers.CharField(required=False, allow_blank=True)
    kind = ChoiceSetField(choices=GROUP_KINDS, required=False)
    ordering = serializers.CharField(required=False, help_text="name, lag, tps, delay (prefix - for descending)")


class ProgressQuery(StrictInputSerializer):
    topic = StrictCharField(required=False, help_text="only this topic")


class GroupRowOutput(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=GROUP_KINDS)
    brokers = serializers.ListField(child=serializers.CharField())
    topics = serializers.ListField(child=serializers.CharField())
    lag = serializers.IntegerField(help_text="messages not consumed yet, over every topic and broker")
    tps = serializers.FloatField(
        allow_null=True,
        help_text="the brokers' consumeTps, as the progress API's consume_tps: messages pulled per second over the last minute (null: no broker gave it)",
    )
    delay = serializers.FloatField(
        allow_null=True,
        help_text="consume delay in seconds: now less the store time of the last message consumed "
        "before the backlog (lastTimestamp), the oldest queue behind counting; 0 without backlog, null unknown",
    )
    consume_enable = serializers.BooleanField()
    online = serializers.BooleanField()
    members = serializers.IntegerField(allow_null=True)
    consume_type = serializers.CharField(allow_null=True, help_text="PUSH or PULL")
    message_model = serializers.CharField(allow_null=True)
    version = serializers.CharField(allow_null=True)
    strategy = serializers.CharField(allow_null=True, help_text="as the members last reported it")


class GroupRowsOutput(GroupRowOutput):
    """GroupRowOutput built as plain dicts: a page of 1,000 rows stays cheap."""

    def to_representation(self, g) -> dict:
        return {
            "name": g.name,
            "kind": g.kind,
            "brokers": list(g.brokers),
            "topics": list(g.topics),
            "lag": g.lag,
            "tps": g.tps,
            "delay": g.delay,
            "consume_enable": g.consume_enable,
            "online": g.online,
            "members": g.members,
            "consume_type": g.consume_type,
            "message_model": g.message_model,
            "version": g.version,
            "strategy": g.strategy,
        }


class MemberOutput(serializers.Serializer):
    client_id = serializers.CharField()
    client_addr = serializers.CharField()
    language = serializers.CharField()
    version = serializers.CharField()
    brokers = serializers.ListField(child=serializers.CharField())


class SubscriptionOutput(serializers.Serializer):
    topic = serializers.CharField()
    expression = serializers.CharField()
    expression_type = serializers.CharField()


class QueueProgressOutput(serializers.Serializer):
    topic = serializers.CharField()
    broker_name = serializers.CharField()
    queue_id = serializers.IntegerField()
    broker_offset = serializers.IntegerField()
    consumer_offset = serializers.IntegerField()
    lag = serializers.IntegerField()
    last_timestamp = serializers.IntegerField(help_text="ms; store time of the last consumed message, 0 unknown")
    last_time = serializers.DateTimeField(allow_null=True)
    owner = serializers.CharField(allow_null=True, help_text="the member holding the queue (its running info)")


class GroupProgressOutput(serializers.Serializer):
    group = serializers.CharField()
    topic = serializers.CharField(allow_null=True)
    consume_tps = serializers.FloatField()
    diff_total = serializers.IntegerField()
    delay = serializers.FloatField(allow_null=True, help_text="consume delay in seconds, as the group list's delay")
    queues = QueueProgressOutput(many=True)


class GroupDetailOutput(serializers.Serializer):
    name = serializers.CharField()
    online = serializers.BooleanField()
    consume_type = serializers.CharField(allow_null=True)
    message_model = serializers.CharField(allow_null=True)
    consume_from_where = serializers.CharField(allow_null=True)
    brokers = serializers.ListField(child=serializers.CharField())
    topics = serializers.ListField(child=serializers.CharField())
    members = MemberOutput(many=True)
    subscriptions = SubscriptionOutput(many=True)
    delay = serializers.FloatField(
        source="progress.delay", allow_null=True, help_text="consume delay in seconds, as the group list's delay"
    )
    progress = GroupProgressOutput()
    not_answering = serializers.ListField(child=serializers.CharField())
    errors = serializers.ListField(child=serializers.CharField())


# -- allocation: input -----------------------------------------------------------------------------------


class ScenarioInput(StrictInputSerializer):
    add_consumers = serializers.ListField(child=StrictCharField(), required=False, default=list)
    remove_consumers = serializers.ListField(child=StrictCharField(), required=False, default=list)
    brokers_down = serializers.ListField(child=StrictCharField(), required=False, default=list)
    queue_counts = serializers.DictField(
        child=StrictIntegerField(min_value=0, max_value=1024), required=False, default=dict
    )


class AllocationInputBase(StrictInputSerializer):
    schema_rules = allocation_rules()

    topic = StrictCharField(required=False, help_text="a live topic: its readable queues")
    queues = serializers.ListField(
        child=serializers.JSONField(), required=False, help_text="or queues: [{topic, broker_name, queue_id}]"
    )
    group = StrictCharField(required=False, help_text="a live group: its members' client ids")
    cids = serializers.ListField(child=serializers.JSONField(), required=False, help_text="or client ids")
    current = serializers.JSONField(required=False, help_text="what-if: what each client holds now, {cid: [queue]}")
    scenario = ScenarioInput(required=False)

    def _pick(self, attrs: dict, one: str, other: str) -> None:
        if (one in attrs) == (other in attrs):
            raise serializers.ValidationError({one: [f"give either {one} or {other}."]})

    def validate(self, attrs: dict) -> dict:
        self._pick(attrs, "topic", "queues")
        self._pick(attrs, "group", "cids")
        try:
            if "topic" in attrs:
                rules.checked_topic(attrs["topic"])
            else:
                attrs["queues"] = rules.parse_queues(attrs["queues"])
            if "group" in attrs:
                rules.checked_group(attrs["group"])
            else:
                attrs["cids"] = rules.parse_cids(attrs["cids"])
            if "current" in attrs:
                attrs["current"] = rules.parse_assignment(attrs["current"])
            self.check_strategy(attrs)
        except InvalidInput as exc:
            raise _refusal(exc) from None
        if "scenario" in attrs:
            attrs["scenario"] = Scenario(**attrs["scenario"])
        return attrs

    # Each input's own check of its strategy part (raises InvalidInput); declared here, defined by every
    # subclass (a DRF serializer's metaclass does not mix with abc's).
    check_strategy: Callable[[dict], None]


class AllocationPreviewInput(AllocationInputBase):
    schema_rules = {
        **allocation_rules(),
        "oneOf": [  # each strategy with the parameters it takes
            strategy_branch(name) for name in rules.PARAMS
        ],
    }

    strategy = StrictCharField(
        help_text="AVG, AVG_BY_CIRCLE, CONFIG, MACHINE_ROOM, MACHINE_ROOM_NEARBY, CONSISTENT_HASH"
    )
    params = serializers.JSONField(required=False, default=dict, help_text="the strategy's parameters")

    def check_strategy(self, attrs: dict) -> None:
        rules.build_strategy(attrs["strategy"], attrs.get("params"))


class AllocationCompareInput(AllocationInputBase):
    schema_rules = {
        **allocation_rules(),
        "properties": {
            **allocation_rules()["properties"],
            "params": {
                "type": "object",
                "additionalProperties": False,
                "properties": {name: params_schema(name) for name in rules.PARAMS},
            },
        },
    }

    params = serializers.JSONField(required=False, default=dict, help_text="{strategy name: its parameters}")

    def check_strategy(self, attrs: dict) -> None:
        params = attrs.get("params")
        if not isinstance(params, dict):
            raise InvalidInput("params", "must be an object {strategy name: parameters}.")
        for name, p in params.items():
            rules.checked_strategy_name(name, f"params.{name}")
            rules.strategy_kwargs(name, p, f"params.{name}")


# -- allocation: output ----------------------------------------------------------------------------------


def preview_json(p: AllocationPreview) -> dict:
    return {
        "strategy": p.strategy_name,
        "assignments": {cid: [queue_json(q) for q in qs] for cid, qs in p.assignment.items()},
        "owners": {queue_key(row.queue): list(row.cids) for row in p.queue_owners},
        "queue_counts": dict(p.queue_counts),
        "balance": p.balance,
        "idle": list(p.idle_consumers),
        "unassigned": [queue_json(q) for q in p.unassigned_queues],
        "shared": [{"queue": queue_json(r.queue), "cids": list(r.cids)} for r in p.shared_queues],
        "foreign": [queue_json(q) for q in p.foreign_queues],
    }


def diff_json(d: MovementDiff) -> dict:
    return {
        "queues_moved": d.queues_moved,
        "queues_released": d.queues_released,
        "queues_picked_up": d.queues_picked_up,
        "moves": [{"queue": queue_json(m.queue), "before": list(m.before), "after": list(m.after)} for m in d.moves],
        "gains": {cid: [queue_json(q) for q in qs] for cid, qs in d.gains.items()},
        "losses": {cid: [queue_json(q) for q in qs] for cid, qs in d.losses.items()},
    }


def result_json(r: PreviewResult) -> dict:
    out = preview_json(r.preview)
    if r.diff is not None:
        out["moved"] = diff_json(r.diff)
    if r.before is not None:
        out["before"] = preview_json(r.before)
    return out


class MovedOutput(serializers.Serializer):
    queues_moved = serializers.IntegerField(help_text="queues held before and after, by other clients")
    queues_released = serializers.IntegerField(help_text="held before, by nobody after")
    queues_picked_up = serializers.IntegerField(help_text="held by nobody before, by someone after")
    moves = serializers.ListField(child=serializers.DictField())
    gains = serializers.DictField(child=QueueSerializer(many=True))
    losses = serializers.DictField(child=QueueSerializer(many=True))


class SharedOutput(serializers.Serializer):
    queue = QueueSerializer()
    cids = serializers.ListField(child=serializers.CharField())


class AllocationOutput(serializers.Serializer):
    strategy = serializers.CharField()
    assignments = serializers.DictField(child=QueueSerializer(many=True), help_text="client id -> its queues")
    owners = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text='"<topic>/<broker>/<queue id>" -> the clients holding it ([] nobody)',
    )
    queue_counts = serializers.DictField(child=serializers.IntegerField())
    balance = serializers.IntegerField(help_text="most minus fewest queues per client")
    idle = serializers.ListField(child=serializers.CharField())
    unassigned = QueueSerializer(many=True)
    shared = SharedOutput(many=True)
    foreign = QueueSerializer(many=True, help_text="handed out but not a queue of the input (CONFIG)")
    moved = MovedOutput(required=False, help_text="what-if only: the movement from current (or before)")

    def to_representation(self, instance) -> dict:
        return result_json(instance) if isinstance(instance, PreviewResult) else preview_json(instance)


class CompareEntryOutput(AllocationOutput):
    skipped = serializers.CharField(allow_null=True, help_text="why this strategy has no preview")

    def get_fields(self) -> dict:
        fields = super().get_fields()
        for name, field in fields.items():  # a skipped strategy has only its name and why (the schema says so)
            field.required = name in ("strategy", "skipped")
        return fields


class CompareOutput(serializers.Serializer):
    queues = serializers.IntegerField()
    cids = serializers.ListField(child=serializers.CharField())
    strategies = CompareEntryOutput(many=True)

    def to_representation(self, instance: CompareResult) -> dict:
        rows = []
        for e in instance.entries:
            if e.result is None:
                rows.append({"strategy": e.name, "skipped": e.skipped_reason})
            else:
                rows.append(
                    {
                        **result_json(e.result),
                        "strategy": e.name,
                        "reported_name": e.result.strategy_name,
                        "skipped": None,
                    }
                )
        return {"queues": len(instance.queues), "cids": list(instance.cids), "strategies": rows}


class MemberReportOutput(serializers.Serializer):
    client_id = serializers.CharField()
    answered = serializers.BooleanField()
    error = serializers.CharField()
    strategy = serializers.CharField()
    subscription = serializers.CharField()
    queues = QueueSerializer(many=True)


class LiveCheckOutput(serializers.Serializer):
    topic = serializers.CharField()
    consistent = serializers.BooleanField()
    members = MemberReportOutput(many=True)
    not_answering = serializers.ListField(child=serializers.CharField())
    observed = AllocationOutput(allow_null=True)
    expected = AllocationOutput(allow_null=True)
    doubly_owned = SharedOutput(many=True)
    unowned = QueueSerializer(many=True)
    stale = QueueSerializer(many=True)
    reference_strategy = serializers.CharField(allow_null=True)
    strategy_outliers = serializers.ListField(child=serializers.CharField())
    reference_subscription = serializers.CharField(allow_null=True)
    subscription_outliers = serializers.ListField(child=serializers.CharField())

    def to_representation(self, c) -> dict:
        check = c.check
        members = [
            {
                "client_id": m.client_id,
                "answered": m.answered,
                "error": m.error,
                "strategy": m.strategy,
                "subscription": m.subscription,
                "queues": [queue_json(q) for q in m.queues],
            }
            for m in c.members
        ]
        return {
            "topic": c.topic,
            "consistent": c.consistent,
            "members": members,
            "not_answering": list(c.not_answering),
            "observed": preview_json(check.observed) if check else None,
            "expected": preview_json(check.expected) if check and check.expected else None,
            "doubly_owned": [{"queue": queue_json(r.queue), "cids": list(r.cids)} for r in c.doubly_owned],
            "unowned": [queue_json(q) for q in c.unowned],
            "stale": [queue_json(q) for q in check.stale_queues] if check else [],
            "reference_strategy": check.reference_strategy if check else None,
            "strategy_outliers": list(check.strategy_outliers) if check else [],
            "reference_subscription": check.reference_subscription if check else None,
            "subscription_outliers": list(check.subscription_outliers) if check else [],
        }


class GroupAllocationOutput(serializers.Serializer):
    group = serializers.CharField()
    topics = LiveCheckOutput(many=True)

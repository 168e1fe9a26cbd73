"""What the allocation preview's and compare's request bodies accept, as JSON schema for the OpenAPI
document (consumers.serializers' AllocationInputBase declares it as its ``schema_rules``), derived from the
checks in :mod:`consumers.rules` that enforce it: parse_queues, parse_cids, parse_assignment and PARAMS."""

from __future__ import annotations

from typing import Any

from console.schema_examples import TOPIC_NAME_PATTERN
from consumers import rules


def queue_schema() -> dict:
    """A queue object as rules.parse_queue reads it."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["topic", "broker_name", "queue_id"],
        "properties": {
            "topic": {"type": "string", "pattern": TOPIC_NAME_PATTERN},
            "broker_name": {"type": "string", "pattern": r"\S"},
            "queue_id": {"type": "integer", "minimum": 0, "maximum": rules.MAX_QUEUE_NUMS - 1},
        },
    }


def _param_schemas() -> dict[str, dict]:
    """Each strategy parameter's shape, as rules.strategy_kwargs checks it."""
    rooms = {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}}
    return {
        "virtual_node_cnt": {"type": "integer", "minimum": 1, "maximum": rules.MAX_VIRTUAL_NODES},
        "message_queue_list": {"type": "array", "minItems": 1, "maxItems": rules.MAX_QUEUES, "items": queue_schema()},
        "consumeridcs": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
        "inner": {"type": "string", "enum": list(rules.NEARBY_INNER)},
        "separator": {"type": "string"},
        "broker_rooms": rooms,
        "consumer_rooms": rooms,
    }


REQUIRED_PARAMS = {"CONFIG": ["message_queue_list"], "MACHINE_ROOM": ["consumeridcs"], "MACHINE_ROOM_NEARBY": ["inner"]}


def params_schema(name: str) -> dict:
    """The parameters strategy ``name`` takes (rules.PARAMS): an object of those keys only, the needed ones required."""
    shapes = _param_schemas()
    schema = {"type": "object", "additionalProperties": False, "properties": {p: shapes[p] for p in rules.PARAMS[name]}}
    if name in REQUIRED_PARAMS:
        schema["required"] = REQUIRED_PARAMS[name]
    return schema


def strategy_branch(name: str) -> dict:
    """One strategy of a preview with the parameters it takes (``params`` required when it needs some)."""
    branch: dict[str, Any] = {"properties": {"strategy": {"enum": [name]}, "params": params_schema(name)}}
    if name in REQUIRED_PARAMS:
        branch["required"] = ["params"]
    return branch


def allocation_rules() -> dict:
    """What AllocationInputBase.validate enforces, as JSON schema (rules.parse_queues, parse_cids, parse_assignment)."""
    queues = {"type": "array", "minItems": 1, "maxItems": rules.MAX_QUEUES, "items": queue_schema()}
    return {
        "allOf": [
            {"oneOf": [{"required": ["topic"]}, {"required": ["queues"]}]},
            {"oneOf": [{"required": ["group"]}, {"required": ["cids"]}]},
        ],
        "properties": {
            "queues": queues,
            "cids": {
                "type": "array",
                "minItems": 1,
                "maxItems": rules.MAX_CLIENTS,
                "items": {"type": "string", "pattern": r"\S"},
            },
            "current": {
                "type": "object",
                "maxProperties": rules.MAX_CLIENTS,
                "additionalProperties": {**queues, "minItems": 0},
            },
        },
    }

"""What the allocation preview's and compare's request bodies accept, as JSON schema for the OpenAPI
document (consumers.serializers' AllocationInputBase declares it as its ``schema_rules``), derived from the
checks in :mod:`consumers.rules` that enforce it: parse_queues, parse_cids, parse_assignment and PARAMS."""
from __future__ import annotations

from console.schema_examples import TOPIC_NAME_PATTERN
from consumers import rules


def queue_schema() -> dict:
    """A queue object as rules.parse_queue reads it."""
    return {"type": "object", "additionalProperties": False, "required": ["topic", "broker_name", "queue_id"],
            "properties": {"topic": {"type": "string", "pattern": TOPIC_NAME_PATTERN},
                           "broker_name": {"type": "string", "pattern": r"\S"},
                           "queue_id": {"type": "integer", "minimum": 0, "maximum": rules.MAX_QUEUE_NUMS - 1}}}


def params_schema(name: str) -> dict:
    """The parameters strategy ``name`` takes (rules.PARAMS): an object of those keys only."""
    return {"type": "object", "additionalProperties": False, "properties": {p: {} for p in rules.PARAMS[name]}}


def allocation_rules() -> dict:
    """What AllocationInputBase.validate enforces, as JSON schema (rules.parse_queues, parse_cids, parse_assignment)."""
    queues = {"type": "array", "minItems": 1, "maxItems": rules.MAX_QUEUES, "items": queue_schema()}
    return {"allOf": [{"oneOf": [{"required": ["topic"]}, {"required": ["queues"]}]},
                      {"oneOf": [{"required": ["group"]}, {"required": ["cids"]}]}],
            "properties": {"queues": queues,
                           "cids": {"type": "array", "minItems": 1, "maxItems": rules.MAX_CLIENTS, "items": {"type": "string", "pattern": r"\S"}},
                           "current": {"type": "object", "maxProperties": rules.MAX_CLIENTS,
                                       "additionalProperties": {**queues, "minItems": 0}}}}

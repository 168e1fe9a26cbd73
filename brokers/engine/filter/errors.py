"""Why a selector cannot be compiled, and why one message cannot be evaluated."""

from __future__ import annotations

__all__ = ["EvaluationError", "InvalidSelectorError", "SelectorLimitError", "where"]


class InvalidSelectorError(ValueError):
    """A selector that does not compile: a lexical or syntax error, an operand RocketMQ refuses
    (``a > 'x'``, ``a = NULL``), an unknown expression type or a limit passed. The message says
    what and, when it is about one place, where (``line 1, column 7``)."""


class SelectorLimitError(InvalidSelectorError):
    """A selector over one of the limits of ``sql92_parser`` (length, nesting, IN list); the message names the limit."""


class EvaluationError(Exception):
    """What makes RocketMQ's evaluator throw for one message (a property that is no number where
    one is compared with a number, say): the message does not match, as on Apache's broker."""


def where(text: str, position: int) -> str:
    """``line L, column C`` (both from 1) of the character at ``position`` of ``text``, as JavaCC reports places."""
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return f"line {line}, column {column}"

"""One rule for every list filter of the console, on its pages and in its API: a bad value is
refused, never ignored.

A filter the reader cannot apply (``?type=bogus``, ``since=yesterday``, ``result=maybe``) would
otherwise answer a list that looks filtered and is not. So:

- the API answers 400 naming the parameter and what it accepts (the choices, or the format);
- a page shows the error naming the field, answers 400 (the console's status for a refused
  form read with GET, as the message search does) and lists nothing.

Pages declare their filters as a :class:`FilterForm` built from :class:`ChoiceFilter`,
:class:`DateFilter` and ordinary optional fields; API queries use :class:`ChoiceFilterField`
and :class:`ChoiceSetField`. The messages come from :func:`choice_error`, so a page and its API
word a refusal alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_noop
from rest_framework import serializers

DATE_FORMAT_HINT = gettext_noop("a date as YYYY-MM-DD")


def choice_error(values: Iterable[str], choices: Sequence[str]) -> str:
    """The refusal of ``values`` that are not among ``choices``, naming what is accepted."""
    shown = ", ".join(repr(str(v)) for v in values)
    return f"{shown} is not accepted; use one of: {', '.join(str(c) for c in choices)}."


def parse_choice_set(raw: str, choices: Sequence[str]) -> frozenset[str]:
    """A comma-separated list of ``choices`` (``normal,retry``); ValueError naming the unknown ones."""
    values = frozenset(v.strip() for v in raw.split(",") if v.strip())
    unknown = sorted(values - set(choices))
    if unknown:
        raise ValueError(choice_error(unknown, choices))
    return values


# -- API (DRF) ----------------------------------------------------------------------------------------


class ChoiceFilterField(serializers.ChoiceField):
    """One value among ``choices``; a refusal names the accepted values."""

    def to_internal_value(self, data: Any) -> Any:
        if data == "" and self.allow_blank:
            return ""
        if str(data) not in self.choice_strings_to_values:
            raise serializers.ValidationError(choice_error([data], list(self.choice_strings_to_values)))
        return self.choice_strings_to_values[str(data)]


class ChoiceSetField(serializers.CharField):
    """A comma-separated set of ``choices`` (``?status=queued,running``) read as a frozenset."""

    def __init__(self, *, choices: Sequence[str], **kwargs: Any) -> None:
        self.accepted = tuple(choices)
        kwargs.setdefault("help_text", f"comma-separated: {', '.join(self.accepted)}")
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> frozenset[str]:
        try:
            return parse_choice_set(super().to_internal_value(data), self.accepted)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None


# -- pages (Django forms) -----------------------------------------------------------------------------


class ChoiceFilter(forms.ChoiceField):
    """An optional choice of a page's filters; a refusal names the accepted values."""

    def __init__(self, *, choices: Sequence[tuple[str, str]], **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        super().__init__(choices=choices, **kwargs)

    def validate(self, value: Any) -> None:
        if value in self.empty_values:
            return
        if not self.valid_value(value):
            accepted = [str(key) for key, _ in self.choices if key not in self.empty_values]
            raise ValidationError(choice_error([value], accepted), code="invalid_choice")


class DateFilter(forms.DateField):
    """An optional date of a page's filters, YYYY-MM-DD (what a date input sends)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("input_formats", ["%Y-%m-%d"])
        kwargs.setdefault("widget", forms.DateInput(attrs={"type": "date"}))
        super().__init__(**kwargs)

    def to_python(self, value: Any):
        try:
            return super().to_python(value)
        except ValidationError:
            raise ValidationError(
                gettext("%(value)s is not accepted; give %(hint)s.")
                % {"value": repr(str(value)), "hint": gettext(DATE_FORMAT_HINT)},
                code="invalid",
            ) from None


class FilterForm(forms.Form):
    """A page's list filters, read from the query string (every field optional).

    Build it with ``request.GET or None``. When a value is refused, :attr:`refused` is true: the
    page shows the errors (``console/_filter_errors.html``), lists nothing and answers
    :attr:`status` 400. :meth:`filters` gives the selector's arguments, the defaults when no
    filter was given; it refuses to run for a refused form, so no page can fall back to the
    unfiltered list by mistake.
    """

    @property
    def refused(self) -> bool:
        return self.is_bound and not self.is_valid()

    @property
    def status(self) -> int:
        return 400 if self.refused else 200

    def filters(self) -> Any:
        if self.refused:
            raise ValueError("the filters were refused; list nothing")
        data = self.cleaned_data if self.is_bound else {name: field.initial for name, field in self.fields.items()}
        return self.filters_from({k: v for k, v in data.items() if v not in (None, "")})

    # The selector's arguments from the given (valid, non-empty) values: defined by each page's form
    # (a Django form's metaclass does not mix with abc's).
    filters_from: Callable[[dict[str, Any]], Any]

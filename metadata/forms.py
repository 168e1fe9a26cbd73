"""The metadata page's forms: export (scope, special topics), import (upload a file, pick the target), apply.

A scope is one choice value: ``cluster:<name>``, ``broker:<name>`` or empty (every cluster, export only).
"""

from __future__ import annotations

from typing import TypedDict

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from metadata.document import MAX_DOCUMENT_BYTES


def scope_choices(clusters: tuple[str, ...], brokers: tuple[str, ...], every: bool) -> list[tuple[str, str]]:
    head = [("", _("every cluster"))] if every else []
    return (
        head
        + [(f"cluster:{c}", _("cluster %(name)s (every master)") % {"name": c}) for c in clusters]
        + [(f"broker:{b}", _("broker %(name)s only") % {"name": b}) for b in brokers]
    )


class ScopeKwargs(TypedDict, total=False):
    cluster: str
    broker: str


def scope_kwargs(value: str) -> ScopeKwargs:
    """``cluster:x`` -> {"cluster": "x"}; ``broker:y`` -> {"broker": "y"}; empty -> {}."""
    kind, _, name = value.partition(":")
    if kind == "cluster" and name:
        return {"cluster": name}
    if kind == "broker" and name:
        return {"broker": name}
    return {}


class _Scoped(forms.Form):
    every = False

    def __init__(self, *args, clusters: tuple[str, ...] = (), brokers: tuple[str, ...] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["scope"].choices = scope_choices(clusters, brokers, self.every)
        if not self.every and clusters:
            self.fields["scope"].initial = f"cluster:{clusters[0]}"


class MetadataExportForm(_Scoped):
    every = True
    scope = forms.ChoiceField(required=False, label=_("From"))
    include_special = forms.BooleanField(required=False, label=_("Also retry and DLQ topics"))


class MetadataImportForm(_Scoped):
    file = forms.FileField(
        label=_("exportMetadata JSON file"),
        help_text=format_lazy(
            _("RocketMQ's mqadmin exportMetadata output or this console's export (at most {kib} KiB)."),
            kib=MAX_DOCUMENT_BYTES // 1024,
        ),
    )
    scope = forms.ChoiceField(label=_("Into"))

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > MAX_DOCUMENT_BYTES:
            raise forms.ValidationError(
                _("the file is %(size)s bytes; the limit is %(limit)s bytes.")
                % {"size": upload.size, "limit": MAX_DOCUMENT_BYTES}
            )
        return upload.read()


class MetadataApplyForm(_Scoped):
    scope = forms.ChoiceField(label=_("Scope"))
    document = forms.CharField(
        label=_("Document"), widget=forms.Textarea(attrs={"hidden": "hidden"}), max_length=MAX_DOCUMENT_BYTES
    )
    plan_id = forms.CharField(label=_("Plan id"), max_length=64)

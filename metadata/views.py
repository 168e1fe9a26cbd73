"""The metadata page (/metadata/): export a download, upload a file for a dry run, apply it (operator).

Each view parses, calls one selector or service, and renders; refusals name the field and change nothing.
The dry run's page carries the checked document and its plan_id in the apply form, so the apply
writes what the operator saw (or is refused when the brokers changed since).
"""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from brokers.gateway.cluster import cluster_info
from console.actor import actor_from_request
from console.errors import InvalidInput, ServiceError, show_on_form
from console.permissions import console_page
from metadata.api import export_filename
from metadata.document import load_document, parse_document
from metadata.forms import MetadataApplyForm, MetadataExportForm, MetadataImportForm, scope_kwargs
from metadata.selectors import metadata_export, metadata_plan, metadata_scope
from metadata.services import metadata_import


def _names() -> dict[str, tuple[str, ...]]:
    info = cluster_info()
    return {
        "clusters": tuple(sorted(info.clusters)),
        "brokers": tuple(name for name, data in sorted(info.broker_datas.items()) if data.master_addr),
    }


def _page(request: HttpRequest, *, status: int = 200, **context) -> HttpResponse:
    names = _names()
    context.setdefault("export_form", MetadataExportForm(**names))
    context.setdefault("import_form", MetadataImportForm(**names))
    return render(request, "metadata/metadata.html", {"section": "metadata", **context}, status=status)


@console_page()
def metadata_page(request: HttpRequest) -> HttpResponse:
    return _page(request)


@console_page()
def metadata_export_page(request: HttpRequest) -> HttpResponse:
    form = MetadataExportForm(request.GET, **_names())
    if not form.is_valid():
        return _page(request, status=400, export_form=form)
    try:
        scope = metadata_scope(**scope_kwargs(form.cleaned_data["scope"]))
        document = metadata_export(scope=scope, include_special=form.cleaned_data["include_special"])
    except ServiceError as exc:
        show_on_form(form, exc)
        return _page(request, status=exc.status, export_form=form)
    response = JsonResponse(document, json_dumps_params={"indent": 2, "ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="{export_filename(scope.label, document["exportTime"])}"'
    return response


@console_page(methods=("POST",))
def metadata_dry_run_page(request: HttpRequest) -> HttpResponse:
    """POST a file and a target (operator, as the import it leads to; the API's dry run is open to viewers): the plan, nothing written."""
    names = _names()
    form = MetadataImportForm(request.POST, request.FILES, **names)
    if not form.is_valid():
        return _page(request, status=400, import_form=form)
    scope_value = form.cleaned_data["scope"]
    try:
        document = parse_document(load_document(form.cleaned_data["file"]))
        plan = metadata_plan(document=document, scope=metadata_scope(**scope_kwargs(scope_value), default_all=False))
    except ServiceError as exc:
        show_on_form(form, exc)
        return _page(request, status=exc.status, import_form=form)
    apply_form = MetadataApplyForm(
        initial={"scope": scope_value, "document": json.dumps(document.to_json()), "plan_id": plan.plan_id}, **names
    )
    return _page(request, import_form=form, plan=plan, apply_form=apply_form)


@console_page(methods=("POST",))
def metadata_apply_page(request: HttpRequest) -> HttpResponse:
    """POST the dry run's document, target and plan_id (operator): write it, show what was done."""
    names = _names()
    form = MetadataApplyForm(request.POST, **names)
    if not form.is_valid():
        return _page(request, status=400, errors=[f"{f}: {e}" for f, errs in form.errors.items() for e in errs])
    try:
        document = parse_document(load_document(form.cleaned_data["document"], "document"))
        scope = metadata_scope(**scope_kwargs(form.cleaned_data["scope"]), default_all=False)
        plan = metadata_import(
            actor=actor_from_request(request), document=document, scope=scope, plan_id=form.cleaned_data["plan_id"]
        )
    except InvalidInput as exc:
        return _page(request, status=400, errors=[f"{f}: {r}" for f, rs in exc.fields.items() for r in rs])
    except ServiceError as exc:
        return _page(request, status=exc.status, errors=[exc.message])
    return _page(request, plan=plan, applied=True)

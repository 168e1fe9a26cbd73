"""The cluster overview page: name servers, clusters, brokers and alerts. htmx polls it."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from brokers.gateway.overview import broker_overview
from console.permissions import console_page


@console_page()
def home(request: HttpRequest) -> HttpResponse:
    """Overview: name servers, brokers and alerts, read through the admin client. htmx polls it."""
    context = {"overview": broker_overview()}
    if request.htmx:
        return render(request, "brokers/_overview.html", context)
    return render(request, "brokers/home.html", context)

"""The header's menu: its entries, which of them holds the page shown, and the context processor.

Seven entries stay on the bar and the rest sit under "More", so the bar keeps to one row at 1280 px in
both languages. Every page belongs to at most one entry (``section_of``), so exactly one entry is marked
``aria-current="page"``; the account pages belong to none. Pages are named by their URL names (strings:
the kernel imports no app).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from console.roles import Role, role_of


@dataclass(frozen=True)
class MenuEntry:
    key: str
    label: str
    url_name: str
    admin_only: bool = False
    group: str = ""  # "" on the bar; else the heading it sits under in "More"


ENTRIES = (
    MenuEntry("home", _("Overview"), "home"),
    MenuEntry("topics", _("Topics"), "topics:list"),
    MenuEntry("groups", _("Groups"), "consumers:list"),
    MenuEntry("producers", _("Producers"), "producers"),
    MenuEntry("messages", _("Messages"), "messages:query"),
    MenuEntry("dashboards", _("Dashboards"), "dashboards:overview"),
    MenuEntry("alerts", _("Alerts"), "health:alert-rules"),
    MenuEntry("allocation", _("Allocation"), "consumers:allocation", group=_("Operations")),
    MenuEntry("rebalance", _("Rebalance"), "consumers:rebalance-jobs", group=_("Operations")),
    MenuEntry("metadata", _("Metadata"), "metadata:page", group=_("Operations")),
    MenuEntry("acl", _("Access control"), "acl", group=_("Administration")),
    MenuEntry("audit-log", _("Audit log"), "audit-log", group=_("Administration")),
    MenuEntry("users", _("Users"), "users", admin_only=True, group=_("Administration")),
    MenuEntry("tokens", _("API tokens"), "tokens", admin_only=True, group=_("Administration")),
    MenuEntry("clusters", _("Clusters"), "namesrv-sets", admin_only=True, group=_("Administration")),
    MenuEntry("api-docs", _("API"), "api-docs", group=_("Administration")),
)

# URL name (namespace:name, or a name without a namespace) -> the entry holding it; a whole namespace by "ns:*".
SECTIONS = {
    "home": "home",
    "broker-group": "home",
    "broker-group-promote": "home",
    "promotion-job": "home",
    "topics:*": "topics",
    "dlq:*": "groups",
    "messages:*": "messages",
    "dashboards:*": "dashboards",
    "metadata:*": "metadata",
    "consumers:list": "groups",
    "consumers:detail": "groups",
    "consumers:client-running-info": "groups",
    "consumers:reset-offset": "groups",
    "consumers:rebalance": "groups",
    "consumers:subscription-groups": "groups",
    "consumers:subscription-group-create": "groups",
    "consumers:subscription-group-update": "groups",
    "consumers:subscription-group-delete": "groups",
    "health:alert-rules": "alerts",
    "health:alert-rule": "alerts",
    "health:alert-events": "alerts",
    "consumers:allocation": "allocation",
    "consumers:rebalance-jobs": "rebalance",
    "consumers:rebalance-job": "rebalance",
    "producers": "producers",
    "acl": "acl",
    "audit-log": "audit-log",
    "users": "users",
    "user-change": "users",
    "user-set-password": "users",
    "tokens": "tokens",
    "token-revoke": "tokens",
    "namesrv-sets": "clusters",
}


def section_of(namespace: str, url_name: str | None) -> str:
    """The key of the menu entry a page belongs to, or "" (the account pages, the login page)."""
    if namespace:
        return SECTIONS.get(f"{namespace}:{url_name}") or SECTIONS.get(f"{namespace}:*", "")
    return SECTIONS.get(url_name or "", "")


def menu(request: HttpRequest) -> dict:
    """``menu_bar`` and ``menu_more`` (a list of (heading, entries)): what this user sees, each entry with
    its URL and whether it holds the page; ``menu_more_current`` when the page is under "More"."""
    role = role_of(getattr(request, "user", None))
    if role is None:
        return {}
    match = getattr(request, "resolver_match", None)
    current = section_of(match.namespace, match.url_name) if match else ""
    bar: list[Any] = []
    more: dict[str, Any] = {}
    for entry in ENTRIES:
        if entry.admin_only and not role.allows(Role.ADMIN):
            continue
        item = {"key": entry.key, "label": entry.label, "url": reverse(entry.url_name), "current": entry.key == current}
        (more.setdefault(entry.group, []) if entry.group else bar).append(item)
    return {
        "menu_bar": bar,
        "menu_more": list(more.items()),
        "menu_more_current": any(item["current"] for items in more.values() for item in items),
    }

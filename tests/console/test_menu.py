"""The header's menu (console/menu.py): every page marks exactly one entry as the current page (the
account pages none), admins alone see the admin pages, and the entries under "More" are links too."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db

CURRENT = re.compile(r'<a href="([^"]+)" data-testid="menu-([\w-]+)" aria-current="page">')


@pytest.mark.parametrize(
    ("url", "entry"),
    [
        ("/", "home"),
        ("/topics/", "topics"),
        ("/groups/", "groups"),
        ("/subscription-groups/", "groups"),
        ("/producers/", "producers"),
        ("/messages/", "messages"),
        ("/alerts/", "alerts"),
        ("/alerts/events/", "alerts"),
        ("/allocation/", "allocation"),
        ("/rebalance-jobs/", "rebalance"),
        ("/metadata/", "metadata"),
        ("/acl/", "acl"),
        ("/audit/", "audit-log"),
        ("/users/", "users"),
        ("/tokens/", "tokens"),
        ("/namesrv-sets/", "clusters"),
        ("/account/password/", None),
    ],
)
def test_one_entry_holds_the_page(as_role, mq_settings, unused_addr, url, entry) -> None:
    mq_settings(unused_addr)  # the pages render their refusals; the menu is the same
    page = as_role("admin").get(url).content.decode()
    assert [m.group(2) for m in CURRENT.finditer(page)] == ([entry] if entry else []), url


def test_viewers_see_no_admin_entries_and_more_holds_the_rest(as_role, mq_settings, unused_addr) -> None:
    mq_settings(unused_addr)
    page = as_role("viewer").get("/rebalance-jobs/").content.decode()
    for hidden in ("users", "tokens", "clusters"):
        assert f'data-testid="menu-{hidden}"' not in page
    more = page.split('data-testid="menu-more"')[1].split("</details>")[0]
    assert 'data-testid="menu-rebalance" aria-current="page"' in more and 'data-testid="menu-acl"' in more
    assert 'class="holds-current"' in page  # "More" shows that the page is under it

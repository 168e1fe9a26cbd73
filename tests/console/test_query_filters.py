"""One rule for every list filter (console.query_filters): a bad value is refused, never ignored.

The API answers 400 naming the parameter and what it accepts; a page answers 400 with the error
naming the field, and lists nothing (not the unfiltered list).
"""

from __future__ import annotations

import pytest

from console.actor import Actor
from console.audit import record_audit
from console.roles import Role

pytestmark = pytest.mark.django_db

# (endpoint, parameter, bad value, a word the refusal must show: an accepted value or the format)
API_CASES = [
    ("/api/v1/audit-log", "result", "bogus", "failed"),
    ("/api/v1/audit-log", "since", "yesterday", "YYYY"),
    ("/api/v1/audit-log", "ordering", "actor", "created_at"),
    ("/api/v1/topics", "type", "bogus", "retry"),
    ("/api/v1/groups", "kind", "bogus", "system"),
    ("/api/v1/brokers", "status", "bogus", "expired"),
    ("/api/v1/rebalance-jobs", "status", "bogus", "converged"),
    ("/api/v1/rebalance-jobs", "scope", "bogus", "group"),
    ("/api/v1/rebalance-jobs", "dry_run", "maybe", "true"),
    ("/api/v1/rebalance-jobs", "since", "yesterday", "ISO 8601"),
    ("/api/v1/promotion-jobs", "status", "bogus", "promoted"),
    ("/api/v1/promotion-jobs", "dry_run", "maybe", "false"),
    ("/api/v1/dashboards/throughput", "range", "bogus", "week"),
    ("/api/v1/dashboards/backlog", "by", "bogus", "queue"),
]

# (page, field, bad value, a word the refusal must show, what the unfiltered list would show)
PAGE_CASES = [
    ("/audit/", "result", "bogus", "failed", 'data-testid="audit"'),
    ("/audit/", "since", "yesterday", "YYYY-MM-DD", 'data-testid="audit"'),
    ("/topics/", "type", "bogus", "retry", "SCHEDULE_TOPIC_XXXX"),
    ("/groups/", "kind", "bogus", "system", 'data-testid="groups"'),
    ("/rebalance-jobs/", "status", "bogus", "converged", None),
    ("/rebalance-jobs/", "since", "yesterday", "ISO 8601", None),
    ("/dashboards/", "range", "bogus", "week", 'data-testid="panel-'),
]


@pytest.mark.parametrize(
    ("path", "param", "bad", "accepted"), API_CASES, ids=[f"{p}?{k}={v}" for p, k, v, _ in API_CASES]
)
def test_the_api_refuses_a_bad_filter_naming_it_and_what_it_accepts(
    viewer, console_cluster, path, param, bad, accepted
) -> None:
    response = viewer.get(path, {param: bad})
    assert response.status_code == 400, response.content[:500]
    reasons = " ".join(response.json()["fields"][param])
    assert accepted in reasons, reasons


@pytest.mark.parametrize(
    ("path", "field", "bad", "accepted", "unfiltered"), PAGE_CASES, ids=[f"{p}?{k}={v}" for p, k, v, _, _ in PAGE_CASES]
)
@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
def test_a_page_refuses_a_bad_filter_and_lists_nothing(
    as_role, console_cluster, path, field, bad, accepted, unfiltered, htmx
) -> None:
    record_audit(
        actor=Actor("alice", Role.OPERATOR, "console", "10.1.2.3"),
        action="topic.create",
        target_type="topic",
        target="Orders",
        ok=True,
    )
    client = as_role("viewer")
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    if unfiltered is not None:  # the list has something to show when the filter is not given
        assert unfiltered in client.get(path, **headers).content.decode()
    response = client.get(path, {field: bad}, **headers)
    page = response.content.decode()
    assert response.status_code == 400, page[:2000]
    assert f'data-testid="filter-error" data-field="{field}"' in page and accepted in page, page[:3000]
    if unfiltered is not None:
        assert unfiltered not in page

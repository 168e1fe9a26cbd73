"""Every paginated list of the API (console.rest.Pagination): a bad page_size is refused by name."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def _entries(n: int) -> None:
    """``n`` audit rows: the audit log is the paginated list here, as it needs no cluster."""
    from console.models import AuditEntry

    AuditEntry.objects.bulk_create(
        [
            AuditEntry(
                actor="alice",
                source="api",
                action="topic.create",
                target_type="topic",
                target=f"T{i}",
                result=AuditEntry.OK,
            )
            for i in range(n)
        ]
    )


@pytest.mark.parametrize("bad", ["abc", "0", "-1", "1001", "5000", "", " ", "1.5", "१०", "9" * 5000])
def test_a_bad_page_size_is_refused_with_the_field_and_the_range(api_client_as, bad) -> None:
    _entries(3)
    response = api_client_as("viewer").get("/api/v1/audit-log", {"page_size": bad})
    assert response.status_code == 400, response.content
    body = response.json()
    assert list(body["fields"]) == ["page_size"]
    assert "from 1 to 1000" in body["fields"]["page_size"][0]


def test_good_page_sizes_page_as_asked(api_client_as) -> None:
    _entries(5)
    api = api_client_as("viewer")
    first = api.get("/api/v1/audit-log", {"page_size": "2"}).json()
    assert len(first["results"]) == 2 and first["count"] >= 5 and "page_size=2" in first["next"]
    assert len(api.get("/api/v1/audit-log", {"page_size": " 1000 "}).json()["results"]) == first["count"]
    assert len(api.get("/api/v1/audit-log").json()["results"]) == first["count"]  # the default page (100)

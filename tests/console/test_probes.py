"""/healthz (liveness) and /readyz (readiness) for load balancers: no login, nothing sensitive."""

from __future__ import annotations

import pytest
from django.db import connection


def test_healthz_answers_without_login_or_database(client) -> None:
    response = client.get("/healthz")  # no django_db mark: a database access would fail the test
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db(transaction=True)
def test_readyz_is_ready_with_the_database_and_names_it_when_unreachable(client, tmp_path) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200 and response.json() == {"status": "ok", "failed": []}

    original = connection.settings_dict["NAME"]
    connection.close()
    # a database that cannot open: a file in a missing directory (SQLite), a database nobody created (PostgreSQL)
    connection.settings_dict["NAME"] = (
        str(tmp_path / "no-such-dir" / "console.sqlite3")
        if connection.vendor == "sqlite"
        else "gantry_no_such_database"
    )
    try:
        response = client.get("/readyz")
    finally:
        connection.close()
        connection.settings_dict["NAME"] = original
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "failed": ["database"]}  # which one, no path or error text
    assert client.get("/readyz").status_code == 200  # back when the database is

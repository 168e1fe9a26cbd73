"""The suite's two database runs really use their backends (`make test`: SQLite, then GANTRY_TEST_DB=postgres),
and the PostgreSQL server the tests start is private: loopback only, a password, no trust."""

from __future__ import annotations

import pytest

from tests.fixtures.postgres import database_url, postgres_requested

pytestmark = pytest.mark.django_db


def test_the_run_uses_the_backend_it_names():
    from django.db import connection

    assert connection.vendor == ("postgresql" if postgres_requested() else "sqlite")
    if postgres_requested():
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('listen_addresses'), current_setting('password_encryption')")
            assert cursor.fetchone() == ("127.0.0.1", "scram-sha-256")


def test_private_server_refuses_a_wrong_password(request):
    if not postgres_requested():
        pytest.skip("the PostgreSQL run checks its own server")
    import psycopg

    server = request.getfixturevalue("postgres_server")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(
            host=server.host, port=server.port, user=server.user, password="wrong", dbname="postgres", connect_timeout=5
        )


def test_database_url_round_trips_the_connection():
    """What a Celery worker the tests start is given points at the same database."""
    import dj_database_url
    from django.db import connection

    parsed = dj_database_url.parse(database_url(connection.settings_dict))
    assert (parsed["ENGINE"], parsed["NAME"]) == (connection.settings_dict["ENGINE"], connection.settings_dict["NAME"])

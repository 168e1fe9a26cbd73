"""The health app took AlertRule, AlertEvent and HealthScan from the consumers app without touching the
database: the tables keep their names, the two migrations of the move run no SQL, and no model change
is left without a migration."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from health.models import AlertEvent, AlertRule, HealthScan


def test_the_models_keep_the_tables_the_consumers_app_created() -> None:
    assert [m._meta.db_table for m in (AlertRule, AlertEvent, HealthScan)] == [
        "consumers_alertrule",
        "consumers_alertevent",
        "consumers_healthscan",
    ]
    assert {m._meta.app_label for m in (AlertRule, AlertEvent, HealthScan)} == {"health"}


@pytest.mark.django_db(transaction=True)  # SQLite's schema editor cannot run inside the test's transaction
@pytest.mark.parametrize(
    ("app", "migration"), [("health", "0001_initial"), ("consumers", "0006_alerts_and_health_scans_to_health")]
)
def test_the_move_runs_no_sql(app: str, migration: str) -> None:
    out = StringIO()
    call_command("sqlmigrate", app, migration, stdout=out)
    statements = [
        line
        for line in out.getvalue().splitlines()
        if line.strip() and not line.startswith("--") and line.strip() not in ("BEGIN;", "COMMIT;")
    ]
    assert statements == []


@pytest.mark.django_db
def test_every_model_change_has_its_migration() -> None:
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=StringIO())
    except SystemExit as exc:  # makemigrations --check exits 1 when a migration is missing
        pytest.fail(f"makemigrations --check: a model change has no migration (exit {exc.code})")

"""docs/settings.md is what console/settings.py reads, generated from its source: it cannot drift."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from console.settings_reference import settings_markdown, settings_reference

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "console" / "settings.py"


def test_docs_settings_md_is_the_generated_reference():
    assert (ROOT / "docs" / "settings.md").read_text() == settings_markdown(SETTINGS.read_text()), (
        "docs/settings.md is out of date: run `python manage.py settings_reference`"
    )
    call_command("settings_reference", "--check")


def test_every_variable_the_settings_read_is_listed_with_a_meaning():
    source = SETTINGS.read_text()
    read = set(re.findall(r'(?:os\.environ(?:\.get)?[\[(]|os\.getenv\(|_env_bool\()\s*"([A-Z][A-Z0-9_]*)"', source))
    reference = {item.env: item for item in settings_reference(source)}
    assert read <= set(reference), f"not in the reference: {sorted(read - set(reference))}"
    assert {"DATABASE_URL", "SPARK_MASTER", "GANTRY_LAKE_DIR", "REDIS_URL", "SECRET_KEY"} <= set(reference)
    assert [env for env, item in reference.items() if not item.meaning] == [], (
        "give these a comment in console/settings.py"
    )
    assert reference["GANTRY_LAKE_DIR"].settings == ('GANTRY_ANALYTICS["LAKE_DIR"]',)
    assert reference["SPARK_MASTER"].default == '"local[*]"'


def test_a_new_variable_is_found_with_its_setting_default_and_comment():
    source = '''"""Settings. FOO_MODE (how foo runs)."""
import os

def _env_bool(name, default):
    return os.environ.get(name) in {"1"}

# Widgets: the widget service.
WIDGETS = {
    "URL": os.environ.get("WIDGET_URL", "http://127.0.0.1:1"),  # where the widget service listens
    "RETRIES": int(os.environ.get("WIDGET_RETRIES", "3")),
}
TOKEN = os.environ.get("WIDGET_TOKEN") or "none"
MODE = os.environ["FOO_MODE"]
if _env_bool("WIDGET_STRICT", False):  # refuse unknown widgets
    STRICT = True
'''
    found = {item.env: item for item in settings_reference(source)}
    assert set(found) == {"WIDGET_URL", "WIDGET_RETRIES", "WIDGET_TOKEN", "FOO_MODE", "WIDGET_STRICT"}
    assert (found["WIDGET_URL"].settings, found["WIDGET_URL"].default, found["WIDGET_URL"].meaning) == (
        ('WIDGETS["URL"]',),
        '"http://127.0.0.1:1"',
        "where the widget service listens",
    )
    assert found["WIDGET_RETRIES"].meaning == "Widgets: the widget service."  # the dict's comment covers its entries
    assert found["WIDGET_TOKEN"].default == '"none"' and found["WIDGET_TOKEN"].meaning == ""
    assert (found["FOO_MODE"].default, found["FOO_MODE"].meaning) == (None, "how foo runs")  # from the docstring
    assert (found["WIDGET_STRICT"].settings, found["WIDGET_STRICT"].meaning) == (("STRICT",), "refuse unknown widgets")
    assert '| `WIDGET_URL` | `WIDGETS["URL"]` |' in settings_markdown(source)


def test_check_fails_on_a_stale_reference(settings, tmp_path):
    (tmp_path / "console").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "console" / "settings.py").write_text('import os\nX = os.environ.get("X_ONE", "1")  # one\n')
    (tmp_path / "docs" / "settings.md").write_text("# stale\n")
    settings.BASE_DIR = tmp_path
    with pytest.raises(CommandError, match="out of date"):
        call_command("settings_reference", "--check")
    call_command("settings_reference")
    assert '| `X_ONE` | `X` | `"1"` | one |' in (tmp_path / "docs" / "settings.md").read_text()
    call_command("settings_reference", "--check")

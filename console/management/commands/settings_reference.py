"""``python manage.py settings_reference``: write docs/settings.md from console/settings.py's source.

``--check`` writes nothing and fails when docs/settings.md is not what the settings say (the test
suite runs the same comparison), so a new environment variable arrives with its line in the reference.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from console.settings_reference import settings_markdown


def reference_paths() -> tuple[Path, Path]:
    """The settings module's source and the reference generated from it."""
    return Path(settings.BASE_DIR) / "console" / "settings.py", Path(settings.BASE_DIR) / "docs" / "settings.md"


class Command(BaseCommand):
    help = "Write docs/settings.md, the table of every environment variable the settings read (--check: compare only)."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="fail if docs/settings.md differs; write nothing")

    def handle(self, *args, check: bool = False, **options):
        source, target = reference_paths()
        text = settings_markdown(source.read_text())
        current = target.read_text() if target.exists() else None
        if check:
            if current != text:
                raise CommandError(f"{target} is out of date: run `python manage.py settings_reference`")
            self.stdout.write(f"{target} is up to date")
            return
        if current != text:
            target.write_text(text)
        self.stdout.write(f"wrote {target}" if current != text else f"{target} is up to date")

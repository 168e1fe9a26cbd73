"""The Chinese catalogue: the committed locale/zh_Hans/.../django.mo is what its django.po compiles to
(so a fresh machine needs no gettext tools), and every entry is translated (none empty or fuzzy)."""
from __future__ import annotations

from pathlib import Path

import polib

from django.conf import settings

CATALOGUE = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES"


def test_the_committed_mo_is_compiled_from_the_po(tmp_path) -> None:
    po = polib.pofile(str(CATALOGUE / "django.po"))
    fresh = tmp_path / "django.mo"
    po.save_as_mofile(str(fresh))
    assert fresh.read_bytes() == (CATALOGUE / "django.mo").read_bytes(), (
        "django.mo is stale: run `python -c \"import polib; polib.pofile('locale/zh_Hans/LC_MESSAGES/django.po')"
        ".save_as_mofile('locale/zh_Hans/LC_MESSAGES/django.mo')\"` (docs/i18n.md)")


def test_every_entry_is_translated_and_keeps_its_placeholders() -> None:
    po = polib.pofile(str(CATALOGUE / "django.po"))
    assert not po.untranslated_entries() and not po.fuzzy_entries() and not po.obsolete_entries()
    for entry in po:
        for placeholder in ("%(name)s", "%(code)s", "%(codes)s", "%(value)s", "%(hint)s", "%(number)s", "%(pages)s", "%(shown)s", "%(total)s"):
            assert entry.msgid.count(placeholder) == entry.msgstr.count(placeholder), entry.msgid


def test_every_string_a_template_marks_for_translation_is_in_the_catalogue() -> None:
    """A `{% translate "…" %}` added to a template without a catalogue entry would stay English in Chinese."""
    import re

    marked = re.compile(r"""{%\s*(?:translate|trans)\s+(["'])(.*?)\1""")
    known = {entry.msgid for entry in polib.pofile(str(CATALOGUE / "django.po"))}
    missing = sorted({(str(path.relative_to(settings.BASE_DIR)), m.group(2))
                      for path in (Path(settings.BASE_DIR) / "templates").rglob("*.html")
                      for m in marked.finditer(path.read_text(encoding="utf-8")) if m.group(2) not in known})
    assert not missing, missing

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
        ".save_as_mofile('locale/zh_Hans/LC_MESSAGES/django.mo')\"` (docs/i18n.md)"
    )


def test_every_entry_is_translated_and_keeps_its_placeholders() -> None:
    po = polib.pofile(str(CATALOGUE / "django.po"))
    assert not po.untranslated_entries() and not po.fuzzy_entries() and not po.obsolete_entries()
    import re

    for entry in po:
        # Chinese has no plural "s": a translation may drop a pluralize value (named *_plural, or a
        # numbered repeat such as queues2), never a value the reader needs.
        for placeholder in set(re.findall(r"%\(\w+\)s", entry.msgid)):
            if not re.search(r"(_plural\d*|[a-z][23])\)s$", placeholder):
                assert entry.msgid.count(placeholder) == entry.msgstr.count(placeholder), entry.msgid
        assert set(re.findall(r"%\(\w+\)s", entry.msgstr)) <= set(re.findall(r"%\(\w+\)s", entry.msgid)), entry.msgid


def test_every_string_a_template_marks_for_translation_is_in_the_catalogue() -> None:
    """A `{% translate "…" %}` or `{% blocktranslate %}` added to a template without a catalogue entry would
    stay English in Chinese. The msgids come from Django's own template extraction (what makemessages reads)."""
    import ast
    import re

    from django.utils.translation.template import templatize

    call = re.compile(r"""\bgettext\((u(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"))\)""")  # repr() quotes either way
    known = {entry.msgid for entry in polib.pofile(str(CATALOGUE / "django.po"))}
    missing = sorted(
        {
            (str(path.relative_to(settings.BASE_DIR)), msgid)
            for path in (Path(settings.BASE_DIR) / "templates").rglob("*.html")
            for msgid in (
                ast.literal_eval(m.group(1))
                for m in call.finditer(templatize(path.read_text(encoding="utf-8"), origin=str(path)))
            )
            if msgid not in known
        }
    )
    assert not missing, missing


def test_every_string_python_marks_for_translation_is_in_the_catalogue() -> None:
    """`_("…")` / `gettext("…")` in a form or view (labels, help texts, choices) without a catalogue entry would stay
    English in Chinese."""
    import ast

    marks = {"_", "gettext", "gettext_lazy", "gettext_noop", "pgettext", "pgettext_lazy"}
    known = {entry.msgid for entry in polib.pofile(str(CATALOGUE / "django.po"))}
    base = Path(settings.BASE_DIR)
    missing = set()
    for path in base.rglob("*.py"):
        if path.relative_to(base).parts[0] in {".venv", "var", "tests", "bench", "node_modules"}:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in marks
                and node.args
                and isinstance(node.args[-1], ast.Constant)
                and isinstance(node.args[-1].value, str)
                and node.args[-1].value not in known
            ):
                missing.add((str(path.relative_to(base)), node.args[-1].value))
    assert not missing, sorted(missing)

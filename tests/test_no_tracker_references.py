"""Code and docs speak in the repository's own terms: no tracker or work-session numbers.

A reader of the repository knows neither the issue tracker nor the sessions the work was done in,
so a tracked file names the feature, the defect, the benchmark row, or the date and commit of a
measurement instead (docs/benchmarks.md shows how). Another project's tracker, written
``owner/repo#N`` or ``owner/repo #N`` (``apache/rocketmq#9416``), is a reference anyone can follow
and stays. Translation catalogues (``.po``, ``.mo``) are generated and left out.
"""

from __future__ import annotations

import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The word "issue" or "session", an optional plural, a space or hyphen, an optional '#', a number
# (the forms test_the_checker_sees_a_mention... builds below).
MENTION = re.compile(r"\b(issue|session)s?[ \t-]#?[0-9]+", re.IGNORECASE)
# Another project's tracker: owner/repo#N or owner/repo #N, optionally "owner/repo issue #N".
OTHER_PROJECT = re.compile(r"\b[\w.-]+/[\w.-]+(?:\s+(?:issue|pull request|PR))?\s?#[0-9]+", re.IGNORECASE)
EXCLUDED_SUFFIXES = (".po", ".mo")
# Walked when the checkout has no git metadata (a source tarball, say).
SCOPE = [
    "brokers",
    "consumers",
    "health",
    "topics",
    "analytics",
    "metadata",
    "console",
    "tests",
    "bench",
    "tools",
    "templates",
    "static",
    "docs",
    ".ci",
    "README.md",
    "Makefile",
    "pytest.ini",
    "pyproject.toml",
]


def mentions(text: str) -> list[str]:
    """The tracker or session mentions in ``text``, other projects' ``owner/repo#N`` removed first."""
    return [m.group(0) for m in MENTION.finditer(OTHER_PROJECT.sub("", text))]


def _tracked_files() -> list[pathlib.Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
        names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
    except (OSError, subprocess.SubprocessError):
        names = []
        for entry in SCOPE:
            path = ROOT / entry
            found = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else []
            names.extend(str(p.relative_to(ROOT)) for p in found if "__pycache__" not in p.parts)
    return [ROOT / n for n in sorted(names) if not n.endswith(EXCLUDED_SUFFIXES)]


def test_the_checker_sees_a_mention_and_spares_another_projects_tracker() -> None:
    word = "iss" + "ue"  # split so that this file does not mention what it forbids
    assert mentions(f"Drills 4 and 6 of {word} 12") == [f"{word} 12"]
    assert mentions(f"(see {word} #15, row 3); the {word}-15 benches") == [f"{word} #15", f"{word}-15"]
    assert mentions("Sess" + "ion 16 (2026-11-28): sess" + "ions 12–13") == ["Sess" + "ion 16", "sess" + "ions 12"]
    assert mentions("apache/rocketmq#9416 and apache/rocketmq-dashboard #352") == []
    assert mentions(f"apache/rocketmq {word} #9416") == []
    assert mentions(f"the 2026-11-28 run; {word}s were none; a session's cookie; tissue 3") == []


def test_no_tracked_file_mentions_an_issue_or_a_session_number() -> None:
    offenders = []
    for path in _tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary files, and files deleted in the work tree but not yet in the index
        for lineno, line in enumerate(text.splitlines(), 1):
            for found in mentions(line):
                offenders.append(f"{path.relative_to(ROOT)}:{lineno}: {found!r}")
    assert offenders == [], (
        "name the feature, the defect, the benchmark row, or the date and commit instead:\n" + "\n".join(offenders)
    )

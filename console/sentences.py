"""Sentences the jobs store in English (a promotion's or a rebalance's reason, progress and plan), shown in the
reader's language.

Jobs record their reasons once, in English: the REST API and the audit log answer in English whatever the
user picked (docs/i18n.md). A page translates them when it shows them: each app lists its sentences as
regular expressions with named values beside their msgid (marked with ``gettext_noop``, so the catalogue
holds them), and :meth:`Sentences.text` finds the one that matches the whole text and fills the
translation with the values. A value named ``s_…`` is itself a sentence and translated the same way; a
text made of sentences joined by "; " is translated part by part. A text that matches nothing (a remark
of another broker, an error from the network) stays as it came.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from django.utils.translation import gettext, pgettext

__all__ = ["Sentences"]

JOIN = "; "


class Sentences:
    def __init__(self, patterns: Sequence[tuple[str, str]]) -> None:
        self.patterns = tuple((re.compile(regex, re.S), msgid) for regex, msgid in patterns)

    def _one(self, text: str) -> str | None:
        for regex, msgid in self.patterns:
            m = regex.fullmatch(text)
            if m is not None:
                values = {k: (self.text(v) if k.startswith("s_") else v) for k, v in m.groupdict().items()}
                return gettext(msgid) % values
        return None

    def text(self, text: str) -> str:
        """``text`` in the active language: whole, else each "; "-joined part, else as it came."""
        text = str(text or "")
        whole = self._one(text)
        if whole is not None:
            return whole
        if JOIN in text:
            parts = text.split(JOIN)
            done = [self._one(p) for p in parts]
            if any(d is not None for d in done):
                return pgettext("sentence separator", "; ").join(d if d is not None else p for d, p in zip(done, parts))
        return text

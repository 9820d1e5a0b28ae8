"""Text from outside as volbench prints it: fio's job and file names, paths, labels of
older stores, messages quoting any of them, with every control character shown as
its escape, so that none of them reaches a terminal, a Markdown or CSV reader or a
page as a command (``ESC [ 2 J`` clears a terminal, ``ESC ] 0 ;`` sets its title, a
C1 ``\\x9b`` is a CSI of its own, U+202E turns the rest of a line around).

Shown so: Unicode's control characters (category Cc: C0, DEL, C1), format characters
(Cf: bidirectional overrides, zero-width ones), lone surrogates (Cs, which no UTF-8
output can write) and the line and paragraph separators (Zl, Zp), each as Python
writes it in a string literal (``\\x1b``, ``\\n``, ``\\u202e``, ``unicode_escape``).
One function serves every place text is printed: the terminal (cli/console.py, its
rich consoles, and cli/main.py's error line), the sheets' cells, and the Markdown,
CSV and HTML exports. JSON needs none of it: it escapes them itself, and its strings
stay exact.
"""

from __future__ import annotations

import unicodedata

SHOWN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""The Unicode categories shown as escapes."""


def _escape(char: str) -> str:
    if unicodedata.category(char) in SHOWN:
        return char.encode("unicode_escape").decode("ascii")
    return char


def visible(text: str) -> str:
    """``text`` with every character of :data:`SHOWN` as its escape (``\\x1b[2J`` for
    ESC [ 2 J): one line whatever it holds."""
    if text.isprintable():  # no such character (nor any other unprintable one)
        return text
    return "".join(_escape(char) for char in text)


def visible_lines(text: str) -> str:
    """:func:`visible` for each line of ``text``, its line breaks (``\\n``) kept."""
    if text.isprintable():
        return text
    return "\n".join(visible(line) for line in text.split("\n"))

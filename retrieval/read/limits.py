"""What every reader may raise and the limits they share: `DocumentError` (a file that cannot be read,
named printably) and the text limit of the read under way. Below loaders.py and the format readers,
which all import it (so none of them imports loaders.py for its error)."""

from __future__ import annotations

import re
from contextvars import ContextVar
from pathlib import Path

_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # in a name: tab and newline too
# a file's text, in characters: 3M words of prose are ~18M, so prose meets the word limit first; this one
# bounds text with few words (a 200 MB run without spaces is one "word") before it leaves the reader
DEFAULT_MAX_TEXT_CHARS = 32 << 20
# the text limit of the read under way, for the archive readers' streaming guards (formats.py): set
# per read here rather than passed through every reader's signature
read_text_limit: ContextVar[int] = ContextVar("read_text_limit", default=DEFAULT_MAX_TEXT_CHARS)


class DocumentError(ValueError):
    """A document that cannot be loaded. The message names the file and the reason."""

    def __init__(self, source: str | Path, reason: str):
        self.source = printable_name(source)
        self.reason = reason
        super().__init__(f"{source}: {reason}")


def printable_name(name: str | Path) -> str:
    """A file name as text that serialises and prints on one line: bytes that are not UTF-8 are
    shown as U+FFFD, control characters escaped as Python writes them (a newline in a file name
    must not forge an output line)."""
    text = utf8_name(name)
    return _ANY_CONTROL.sub(lambda m: repr(m.group())[1:-1], text) if _ANY_CONTROL.search(text) else text


def utf8_name(name: str | Path) -> str:
    """A file name as valid UTF-8 text (undecodable bytes as U+FFFD), otherwise as it is: a key, not a display."""
    return str(name).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def too_much_text(max_chars: int, chars: int | None = None) -> str:
    """Why a text is refused for its size: the max_text_mb limit."""
    held = f"{chars:,} characters of text, more" if chars else "more characters of text"
    return f"{held} than the {max_chars:,} a document may hold (the max_text_mb limit)"

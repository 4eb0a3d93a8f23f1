"""What the command line shows while it works: progress bars on a terminal, and plain periodic lines
(no carriage returns, no cursor codes) when stderr is a file or a pipe, so logs read as text."""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TextIO

from longqa.retrieval.bm25 import bm25_tokens
from longqa.retrieval.index.library.manifest import Event

EXCERPT_CHARS = 320  # of each passage shown in plain output: the stretch around the answer's sentence
_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+")  # where a sentence of whitespace-collapsed text ends
_CITATION = re.compile(r"\s*\[[A-Za-z]*\d+\]")  # "[E1]"
PLAIN_EVERY_S = 5.0  # a plain progress line per step at most this often, besides each step's first and last


def is_terminal(stream: TextIO) -> bool:
    """Whether `stream` is a terminal a bar can redraw on (not a file, a pipe or TERM=dumb)."""
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # closed or not a real stream
        return False


class Counter(Protocol):
    """A count towards a total (tqdm's subset that the plain form also has)."""

    n: int

    def refresh(self) -> None:
        """Show the current count."""

    def update(self, n: int = 1) -> None:
        """Add `n` to the count."""

    def close(self) -> None:
        """End the display (the plain form prints its last line)."""


class Throttle:
    """When plain lines were last printed: shared by the counters of one display, so a run over a
    thousand documents prints a line every PLAIN_EVERY_S, not one per document."""

    def __init__(self) -> None:
        self.last: float | None = None

    def due(self) -> bool:
        """Whether a plain line may be printed now (and, if so, the time of this one is noted)."""
        now = time.monotonic()
        if self.last is None or now - self.last >= PLAIN_EVERY_S:
            self.last = now
            return True
        return False


class PlainCounter:
    """tqdm's `n` / `update` / `refresh` / `close` as lines ("eval: 12/40 runs"): the display's
    first, then at most one a PLAIN_EVERY_S, and the last one unless `final` is False (a step
    repeated per document)."""

    def __init__(self, total: int, desc: str, unit: str, stream: TextIO, throttle: Throttle, final: bool = True):
        self.total, self.desc, self.unit, self.stream = total, desc, unit, stream
        self.throttle, self.final = throttle, final
        self.n, self._shown = 0, -1

    def update(self, n: int = 1) -> None:
        """Add `n` to the count and print a line when one is due."""
        self.n += n
        self.refresh()

    def refresh(self) -> None:
        """Print a line when the count changed and one is due (always at the total when `final`)."""
        if self.n != self._shown and ((self.final and self.n >= self.total) or self.throttle.due()):
            self._print()

    def close(self) -> None:
        """Print the last count unless it was shown (or `final` is False)."""
        if self.final and self.n != self._shown:
            self._print()

    def _print(self) -> None:
        self._shown = self.n
        print(f"{self.desc}: {self.n:,}/{self.total:,} {self.unit}s", file=self.stream, flush=True)


def counter(
    total: int,
    desc: str,
    unit: str,
    stream: TextIO | None = None,
    throttle: Throttle | None = None,
    final: bool = True,
    **bar: Any,
) -> Counter:
    """A tqdm bar on a terminal, else a `PlainCounter` on `stream` (default stderr)."""
    stream = stream or sys.stderr
    if is_terminal(stream):
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, file=stream, **bar)
    return PlainCounter(total, desc, unit, stream, throttle or Throttle(), final)


class EmbeddingProgress:
    """Embedding progress that appears only once something is embedded (a cached index shows none)."""

    def __init__(self, desc: str, enabled: bool = True, stream: TextIO | None = None):
        self.desc, self.enabled, self.stream, self._bar = desc, enabled, stream, None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            self._bar = counter(total, self.desc, "vector", self.stream, leave=False)
        self._bar.n = done
        self._bar.refresh()

    def __enter__(self) -> Callable[[int, int], None]:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()


class LibraryProgress:
    """Progress of a library update: one counter per step (reading files, embedding a document,
    indexing documents), shown only once the step has work to do."""

    def __init__(self, enabled: bool = True, stream: TextIO | None = None):
        self.enabled, self.stream, self._bars, self._throttle = enabled, stream, {}, Throttle()

    def __call__(self, event: Event) -> None:
        if not self.enabled or event.total <= 0:
            return
        key = (event.step, event.source)
        bar = self._bars.get(key)
        if bar is None:
            for old in [k for k in self._bars if k[0] == event.step]:  # one bar per step at a time
                self._bars.pop(old).close()
            unit = {"reading": "file", "indexing": "document"}.get(event.step, "vector")
            desc = f"embedding {Path(event.source).name}" if event.source else event.step
            final = event.step != "embedding"  # per document: its lines come with the throttle only
            bar = self._bars[key] = counter(event.total, desc, unit, self.stream, self._throttle, final, leave=False)
        bar.n = event.done
        bar.refresh()

    def __enter__(self) -> LibraryProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        for bar in self._bars.values():
            bar.close()


def configure_logging(verbose: bool, quiet: bool) -> None:
    """Log to stderr; `-q` keeps only errors (a file's reading warnings go), `-v` adds info. A warning is its
    message alone, which names its file first ("report.pdf: not fully read: 2 charts"); `-v` adds the level and
    the module that logged, for whoever debugs."""
    level = logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s" if verbose else "%(message)s")
    logging.getLogger().setLevel(level)


def excerpt(text: str, question: str, width: int = EXCERPT_CHARS, answer: str | None = None) -> str:
    """About `width` characters of `text` (whitespace collapsed) centred on the sentence that best matches
    `answer` (the answer's words as written, else the most of its distinct stemmed words), else `question`; cut at
    word boundaries and marked "…" where cut; the start when neither matches anything. A sentence longer than the
    window is shown around where the most of those words come together."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    start = None
    for target in (_answer_words(answer, question), question):
        if target:
            start = _window_on_best_sentence(flat, target, width)
        if start is not None:
            break
    start = min(max(0, start or 0), len(flat) - width)
    end = start + width
    if start > 0 and flat[start - 1] != " ":
        start = flat.find(" ", start) + 1 or start
    if end < len(flat):
        end = flat.rfind(" ", start, end) if flat.rfind(" ", start, end) > start else end
    return ("…" if start > 0 else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")


def _answer_words(answer: str | None, question: str) -> str:
    """The words of an answer that claim something ("unanswerable" and citation marks are not)."""
    if not answer or answer.strip().lower().startswith("unanswerable"):
        return ""
    from longqa.llm.answer_core import answer_core

    return _CITATION.sub("", answer_core(answer, question)).strip()


def _sentences(flat: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of a whitespace-collapsed text."""
    spans, at = [], 0
    for m in _SENTENCE_END.finditer(flat):
        spans.append((at, m.start()))
        at = m.end()
    return [*spans, (at, len(flat))]


def _window_on_best_sentence(flat: str, target: str, width: int) -> int | None:
    """Where a `width` window starts to be centred on the sentence that holds `target` as written (case aside),
    else on the one holding the most of its distinct terms (ties: the earlier); None when no sentence holds any."""
    sentences = _sentences(flat)
    at = flat.lower().find(target.lower()) if len(target) <= width // 2 else -1
    if at >= 0:
        best = next((s, e) for s, e in sentences if s <= at < e or at < s)
    else:
        terms = set(bm25_tokens(target))
        found = [len(terms & set(bm25_tokens(flat[s:e]))) for s, e in sentences]
        if not terms or max(found) == 0:
            return None
        best = sentences[found.index(max(found))]
    begin, end = best
    if end - begin <= width:
        return (begin + end) // 2 - width // 2
    return _densest(flat, begin, end, set(bm25_tokens(target)), width, at)


def _densest(flat: str, begin: int, end: int, terms: set[str], width: int, at: int) -> int:
    """In a sentence longer than the window: where the window holds the most distinct `terms` (a quarter of it
    before the first of them), or the target's place `at` when it was found as written."""
    lead = width // 4
    if at >= 0:
        return max(begin, at - lead)
    hits = [(m.start(), bm25_tokens(m.group())) for m in _WORD.finditer(flat, begin, end)]
    hits = [(pos, tokens[0]) for pos, tokens in hits if tokens and tokens[0] in terms][:500]
    best, start = -1, begin
    for anchor, _ in hits:
        window = max(begin, anchor - lead)
        count = len({term for pos, term in hits if window <= pos < window + width})
        if count > best:
            best, start = count, window
    return start

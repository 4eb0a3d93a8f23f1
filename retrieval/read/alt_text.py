"""An image's alternative text as a short bracketed line of the document's text (`[image: a map of
the harbour]`), shared by the HTML, EPUB, Markdown, Word, PowerPoint and ODT readers. Text that says
nothing (empty, a file name, `image`) is left out."""

from __future__ import annotations

import re

MAX_ALT_CHARS = 500  # alternative text is a caption; past this it is cut
_FILE_NAME = re.compile(
    r"(?i)^[\w ()~+,.-]*\.(?:png|jpe?g|gif|bmp|tiff?|svg|webp|emf|wmf|ico|heic|avif)$|^(?:https?:|data:|/|\./)\S*$"
)
_SAYS_NOTHING = re.compile(  # a default name a camera or a program gave: `IMG_2041`, `DSC01234`, `Screenshot 3`
    r"(?i)^(?:image|img|picture|photo|graphic|icon|spacer|logo|figure|pic|dscn?|screenshot|untitled)[\s_-]*\d*$"
)


def image_line(*texts: str | None) -> str:
    """`[image: ...]` from an image's alternative texts (a description, a title), each distinct
    one that says something, joined by ` - `; "" when none does."""
    kept: list[str] = []
    for text in texts:
        text = " ".join((text or "").split())
        if not text or _FILE_NAME.match(text) or _SAYS_NOTHING.match(text):
            continue
        if len(text) > MAX_ALT_CHARS:
            text = text[:MAX_ALT_CHARS].rsplit(" ", 1)[0] + " …"
        if not any(text.lower() in k.lower() for k in kept):
            kept = [k for k in kept if k.lower() not in text.lower()] + [text]
    return f"[image: {' - '.join(kept)}]" if kept else ""

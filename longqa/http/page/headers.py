"""The headers every response of the page carries (longqa/http/page/api.py and its streams, stream.py): a
strict Content-Security-Policy (nothing loaded from elsewhere), nosniff, no framing, no referrer, no caching."""

from __future__ import annotations

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def page_headers(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The headers every response of the page carries (the CSP, nosniff, no framing, no caching)."""
    return {**HEADERS, **(extra or {})}

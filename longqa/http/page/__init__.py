"""The page `longqa serve` serves at `/` for people: its routes (`api.py`), what a key may read there
(`data.py`), /ask and /index streamed as events (`stream.py`), a file uploaded into a collection
(`upload.py`), and its static files index.html, app.js and app.css, shipped as package data, loaded from
the server itself and nothing else (no build step, no CDN).

Enters: the page's requests, mounted by longqa/http/serve.py. Leaves: the page, JSON and NDJSON replies.
"""

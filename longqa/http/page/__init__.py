"""The page `longqa serve` serves at `/` (longqa/page_api.py): index.html, app.js and app.css, shipped as package data,
loaded from the server itself and nothing else (no build step, no CDN)."""

"""The HTTP servers and their keys: `longqa serve` (a replica with its page) and what longqa adds to the
LangGraph server (langgraph.json's `auth` and `http.app`).

Enters: HTTP requests, each naming its caller by API key.
Leaves: JSON answers and NDJSON event streams, the graphs' runs, and the keys file (`longqa keys`).

Shared by both servers: the keys (`keys.py`) and what a key may do (`access.py`), the request bodies
checked before any grant (`requests.py`), a request's limits (`limits.py`) and no server path in a
response (`scrub.py`). `longqa serve`: `serve.py` (what it takes in before a run: `serve_input.py`, its headers'
deadline: `serve_protocol.py`, a key's index jobs: `job_slots.py`) and the page in `page/`. The
LangGraph server: `auth.py`, `index_runs.py`, and the ASGI guards before it in `server_app.py`
(`state_guard.py`, `run_inputs.py`, `meta_guard.py`, `disconnect.py`, `asgi_body.py`). Imports the runner
(longqa/runner/) and the layers below, never the CLI or the warm server.
"""

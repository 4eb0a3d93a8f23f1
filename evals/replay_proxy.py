"""A replaying proxy in front of an OpenAI-compatible model server, for before/after evals of one model.

`python -m evals.replay_proxy --upstream http://127.0.0.1:PORT --cache FILE` listens on a free local port
(printed) and forwards every request to the upstream server. A chat or completion request whose exact body
it has seen before (same model, messages, temperature, limits...) is answered with the reply the real model
gave then; every other request goes to the model, and a 200 reply is appended to FILE. At temperature 0 a
second run of the same prompt would get the same reply, only hours later on this 2-core machine: so the
"before" code of a change is run against the "after" code's replies and asks the model only for the prompts
where the two differ. The counts of replayed and asked requests go to FILE.stats.json (quoted beside the
numbers). Hand-written: no library here replays an HTTP model server's replies by request body."""

from __future__ import annotations

import argparse
import hashlib
import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

CACHED_PATHS = ("/v1/chat/completions", "/v1/completions", "/chat/completions", "/completions")
MAX_BODY_BYTES = 8 * 1024 * 1024
UPSTREAM_TIMEOUT_S = 900.0


class ReplayCache:
    """Replies by request key, loaded from and appended to one jsonl file; counts of replayed and asked."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.replies: dict[str, dict] = {}
        self.stats = {"replayed": 0, "asked": 0, "passed_through": 0}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by a killed run: that request is asked again
                self.replies[entry["key"]] = entry

    @staticmethod
    def key(path: str, body: bytes) -> str:
        try:  # the same request written with other spacing or key order is the same request
            canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"))
        except ValueError:
            canonical = body.decode("utf-8", "replace")
        return hashlib.sha256(f"{path}\n{canonical}".encode()).hexdigest()

    def get(self, key: str) -> dict | None:
        with self.lock:
            return self.replies.get(key)

    def put(self, key: str, status: int, content_type: str, body: bytes) -> None:
        entry = {"key": key, "status": status, "content_type": content_type, "body": body.decode("utf-8")}
        with self.lock:
            self.replies[key] = entry
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    def count(self, what: str) -> None:
        with self.lock:
            self.stats[what] += 1
            self.path.with_name(self.path.name + ".stats.json").write_text(json.dumps(self.stats), encoding="utf-8")


def handler_for(upstream: str, cache: ReplayCache) -> type[BaseHTTPRequestHandler]:
    client = httpx.Client(base_url=upstream.rstrip("/"), timeout=UPSTREAM_TIMEOUT_S)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            return

        def _reply(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _forward(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._reply(413, "application/json", b'{"error": "request body too large for the replay proxy"}')
                return
            body = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            cacheable = method == "POST" and path in CACHED_PATHS and b'"stream":true' not in body.replace(b" ", b"")
            key = ReplayCache.key(path, body) if cacheable else ""
            if cacheable and (hit := cache.get(key)):
                cache.count("replayed")
                self._reply(hit["status"], hit["content_type"], hit["body"].encode("utf-8"))
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() in {"content-type", "authorization"}}
            try:
                answer = client.request(method, self.path, content=body, headers=headers)
            except httpx.HTTPError as e:
                self._reply(502, "application/json", json.dumps({"error": f"upstream: {e}"}).encode())
                return
            content_type = answer.headers.get("content-type", "application/json")
            if cacheable and answer.status_code == 200:
                cache.put(key, 200, content_type, answer.content)
                cache.count("asked")
            else:
                cache.count("passed_through")
            self._reply(answer.status_code, content_type, answer.content)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self._forward("GET")

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self._forward("POST")

    return Handler


def serve(upstream: str, cache_path: Path, port: int = 0) -> ThreadingHTTPServer:
    """The proxy, bound to 127.0.0.1 (a free port when 0), not yet serving."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(upstream, ReplayCache(cache_path)))
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True, help="the model server's base, e.g. http://127.0.0.1:8080")
    parser.add_argument("--cache", required=True, type=Path, help="the replies file (jsonl), appended to")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    args = parser.parse_args(argv)
    server = serve(args.upstream, args.cache, args.port)
    host, port = server.server_address[:2]
    print(f"http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    socket.setdefaulttimeout(None)
    sys.exit(main())

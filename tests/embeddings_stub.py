"""A small OpenAI-compatible `/v1/embeddings` server for tests and benchmarks: the real wire path,
offline (standard library only, 127.0.0.1, a free port, shut down by its context manager).

    with EmbeddingsStub() as stub:   # stub.base_url: http://127.0.0.1:PORT/v1
        ...

Its vectors are NOT a model's: each word of a text (lowercased, letters and digits) adds a fixed
pseudo-random direction (a hash of the word), so texts sharing words are near and a text is nearest
itself, deterministically. Knobs (attributes; change them between requests):
- `dimension`: the vectors' length (64); `dimension_after=(n, d)`: from the n-th request on, vectors of d
  (a second model behind one name);
- `fail_next=[429, 500, ...]`: the next requests get these statuses (with `retry-after-ms: 1`), one each;
- `fail_after=n`: every request after the n-th answered one gets 500 (an endpoint gone down midway);
- `latency_s`: sleep per request (a fixed cost per batch); `capacity=n`: at most n requests served at once
  (the rest wait: a server of fixed throughput);
- `model_salt`: mixed into the hash (a different model under the same name).
`requests` records each request's input count; `in_flight_max` the most requests served at once.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np


def stub_vector(text: str, dimension: int, salt: str = "") -> list[float]:
    """The stub's vector of `text` (normalised; a text with no word gets a fixed one)."""
    vector = np.zeros(dimension, dtype=np.float64)
    for word in re.findall(r"[a-z0-9]+", text.lower()) or ["<empty>"]:
        seed = int.from_bytes(hashlib.sha256((salt + word).encode()).digest()[:8], "little")
        vector += np.random.default_rng(seed).standard_normal(dimension)
    return (vector / (np.linalg.norm(vector) or 1.0)).tolist()


class EmbeddingsStub:
    """The server; use as a context manager."""

    def __init__(self, dimension: int = 64, latency_s: float = 0.0, capacity: int | None = None):
        self.dimension, self.latency_s = dimension, latency_s
        self._capacity = threading.BoundedSemaphore(capacity) if capacity else None
        self.dimension_after: tuple[int, int] | None = None
        self.fail_next: list[int] = []
        self.fail_after: int | None = None
        self.model_salt = ""
        self.requests: list[int] = []
        self.statuses: list[int] = []
        self.in_flight = self.in_flight_max = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> EmbeddingsStub:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, body: dict) -> tuple[int, dict]:
        with self._lock:
            status = self.fail_next.pop(0) if self.fail_next else 200
            if self.fail_after is not None and len(self.requests) >= self.fail_after:
                status = 500
            self.statuses.append(status)
            if status != 200:
                return status, {"error": {"message": f"stub says {status}", "type": "server_error"}}
            self.requests.append(len(body["input"]))
            n, dimension = len(self.requests), self.dimension
            if self.dimension_after and n >= self.dimension_after[0]:
                dimension = self.dimension_after[1]
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": stub_vector(t, dimension, self.model_salt)}
            for i, t in enumerate(texts)
        ]
        usage = {"prompt_tokens": sum(len(t.split()) for t in texts), "total_tokens": 0}
        return 200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage}

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with stub._lock:
                    stub.in_flight += 1
                    stub.in_flight_max = max(stub.in_flight_max, stub.in_flight)
                try:
                    if stub._capacity is not None:
                        stub._capacity.acquire()
                    try:
                        time.sleep(stub.latency_s)
                        status, reply = stub._answer(body) if self.path.endswith("/embeddings") else (404, {})
                    finally:
                        if stub._capacity is not None:
                            stub._capacity.release()
                finally:
                    with stub._lock:
                        stub.in_flight -= 1
                raw = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                if status != 200:
                    self.send_header("retry-after-ms", "1")
                self.end_headers()
                self.wfile.write(raw)

        return Handler

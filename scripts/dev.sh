#!/usr/bin/env bash
# One entry point for a fresh machine (Python 3.11 + pip, nothing else):
#   bash scripts/dev.sh demo   - set up, then run the main job on the bundled sample document
#   bash scripts/dev.sh test   - set up (install Debian's postgresql and chromium where missing, and build the real-model
#                                tier's llama.cpp server and its two Qwen models where missing, cached
#                                outside the repository), then lint (ruff check, ruff format --check) and
#                                run the test suite
#   bash scripts/dev.sh ocr    - install Debian's Tesseract (OCR of scans and images) where missing
#   bash scripts/dev.sh local-model [start|install|status|stop] - a real tiny model behind llama.cpp's
#                                OpenAI-compatible server, installed outside the repository (scripts/local_model.sh)
# Set-up creates .venv and installs torch==2.13.0 (CPU build) *before* anything that depends on
# torch, so sentence-transformers does not pull gigabytes of CUDA wheels. It is skipped when
# pyproject.toml has not changed since the last successful install.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=true LANGSMITH_TRACING=false \
       ANONYMIZED_TELEMETRY=False HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false

setup() {
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  local stamp=.venv/.install-stamp want
  want=$(sha256sum pyproject.toml scripts/dev.sh | sha256sum | cut -c1-16)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet "torch==2.13.0"
    # setuptools prints an "Editable installation" notice for every editable install of a mapped
    # layout (information, not a fault); only that message is silenced
    PYTHONWARNINGS="ignore:Editable installation" .venv/bin/python -m pip install --quiet -e ".[dev]"
    echo "$want" > "$stamp"
  fi
  # the embedder's ONNX export (once per machine, offline, into ~/.cache/longqa/onnx): a question
  # then never imports torch (retrieval/index/embed/onnx_export.py); a no-op when it is there
  .venv/bin/python -m longqa.retrieval.index.embed.onnx_export >/dev/null || true  # without it: the torch path, and it says why
}

# The scale_out test tier runs a real PostgreSQL server: Debian's `postgresql`, installed where the
# machine lacks it (as root, or through sudo). The tests start and stop their own cluster.
postgres() {
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && return
  echo "installing Debian's postgresql (the scale_out test tier's database server)" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null \
    || { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
}

# The browser tier (tests/test_page_browser.py, pytest -m browser) drives the page `longqa serve` serves in headless
# Chromium: Debian's `chromium` and its `chromium-driver`, installed where the machine lacks them (Selenium, from
# the dev extras, is pointed at /usr/bin/chromedriver; nothing is downloaded at test time).
browser() {
  command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 && return
  echo "installing Debian's chromium and chromium-driver (the browser test tier's headless browser)" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null \
    || { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; }
}

# Scans and photos are read by OCR (retrieval/read/ocr.py): Debian's Tesseract 5 with its English and orientation
# (osd) data, installed where the machine lacks it. Without it, images are skipped with the reason.
ocr() {
  command -v tesseract >/dev/null 2>&1 && [ -e /usr/share/tesseract-ocr/5/tessdata/osd.traineddata ] && return
  echo "installing Debian's tesseract-ocr (OCR of scanned pages and images)" >&2
  local sudo="" packages="tesseract-ocr tesseract-ocr-eng tesseract-ocr-osd"
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null \
    || { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null; }
}

# The real-model tier (tests/test_real_model.py) runs the instruct models the README offers behind llama.cpp's
# server: built and downloaded once per machine (scripts/local_model.sh; ~14 CPU-minutes the first time).
local_models() {
  local m
  for m in qwen-0.5b qwen-1.5b; do
    LONGQA_LOCAL_MODEL=$m bash scripts/local_model.sh install
  done
}

case "${1:-}" in
  demo)
    setup
    shift
    doc=samples/harbor_annual_report.md
    .venv/bin/longqa index "$doc"
    .venv/bin/longqa ask "$doc" "${1:-Which shipyard built the dredger Marrowdeep?}"
    ;;
  test)
    setup
    postgres
    browser
    ocr
    local_models
    shift
    .venv/bin/ruff check .
    .venv/bin/ruff format --check .
    rc=0
    .venv/bin/python -m pytest -q "$@" || rc=$?
    # pytest exits 5 when it collected no tests: that is a failure here, not a pass
    [ "$rc" -eq 5 ] && echo "no tests were collected" >&2
    exit "$rc"
    ;;
  ocr)
    ocr
    ;;
  local-model)
    shift
    exec bash scripts/local_model.sh "$@"
    ;;
  *)
    echo "usage: bash scripts/dev.sh demo|test|ocr|local-model [args]" >&2
    exit 2
    ;;
esac

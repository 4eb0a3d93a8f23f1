"""The bundled all-MiniLM-L6-v2 as an ONNX file, so a question is embedded without importing torch.

The export runs once per model and machine (on first use, or `python -m longqa.retrieval.index.embed.onnx_export`,
which `scripts/dev.sh` runs at set-up), from the bundled weights, offline, into the user's cache:
`LONGQA_ONNX_DIR`, else `$XDG_CACHE_HOME/longqa/onnx`, else `~/.cache/longqa/onnx`. The graph is the
whole sentence-transformers pipeline (BERT, mean pooling over the attention mask, L2 normalisation),
then ONNX Runtime's BERT fusions (attention, layer norm, GELU). The file is kept only when its vectors
match sentence-transformers' on a set of probe texts (short, long, truncated, batched with padding)
within `TOLERANCE`; a `verified.json` beside it records that, and without it the file is never used.

Exporting needs torch and the `onnx` package (dependencies of the project); using the file needs
neither: only onnxruntime and tokenizers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import warnings
from pathlib import Path

from ...environment import onnx_dir
from ..files import atomic_write, file_lock

log = logging.getLogger(__name__)

EXPORT_VERSION = 1  # part of the cache key: a change to the exported graph exports again
TOLERANCE = 1e-4  # largest difference from sentence-transformers' vectors (measured: ~2e-7)
PROBES = [
    "Which shipyard built the dredger Marrowdeep?",
    "x",
    "",
    "The northern terminal handled record cargo volumes this year. Container traffic grew by nine percent.",
    " ".join(["harbor dredging channel depth silt vessel tide"] * 60),  # past 256 word pieces: truncated
    "Über die Brücke: naïve café, 東京, ZX-4471 — 3.5% of €40m",
]


class OnnxUnavailable(RuntimeError):
    """The ONNX export could not be made or did not match the torch model."""


def onnx_cache_dir() -> Path:
    """Where the ONNX exports live (LONGQA_ONNX_DIR, retrieval/environment.py)."""
    return onnx_dir()


def export_dir(model_path: str | Path) -> Path:
    """Where the export of the model at `model_path` lives: named by the model and its weights file
    (path, size, modification time), so new weights export again."""
    model_path = Path(model_path).resolve()
    names = ("model.safetensors", "pytorch_model.bin")
    weights = next((model_path / n for n in names if (model_path / n).exists()), None)
    stat = weights.stat() if weights else None
    key = json.dumps([EXPORT_VERSION, str(model_path), stat.st_size if stat else 0, stat.st_mtime_ns if stat else 0])
    return onnx_cache_dir() / f"{model_path.name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def exported_model(model_path: str | Path, export: bool = True) -> Path:
    """The verified ONNX file of the model at `model_path`, exported now where it is missing (and
    `export` allows). Raises OnnxUnavailable when it cannot be had."""
    target = export_dir(model_path)
    if (target / "verified.json").exists() and (target / "model.onnx").exists():
        return target / "model.onnx"
    if not export:
        raise OnnxUnavailable(f"no verified ONNX export in {target}")
    with file_lock(target.parent / f"{target.name}.lock"):  # one export per machine at a time
        if not (target / "verified.json").exists():
            _export(Path(model_path), target)
    return target / "model.onnx"


def _export(model_path: Path, target: Path) -> None:
    log.warning("exporting %s to ONNX (once per machine) into %s", model_path.name, target)
    try:
        import torch  # noqa: F401
        from onnxruntime.transformers.optimizer import optimize_model
    except ImportError as e:
        raise OnnxUnavailable(f"cannot export to ONNX: {e}") from e
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        raw = tmp / "raw.onnx"
        config = json.loads((model_path / "config.json").read_text("utf-8"))
        try:
            _trace(model_path, raw)
            fused = optimize_model(
                str(raw), model_type="bert", num_heads=config["num_attention_heads"], hidden_size=config["hidden_size"]
            )
            fused.save_model_to_file(str(tmp / "model.onnx"))
        except Exception as e:  # the exporter's and optimizer's failures are many and untyped
            raise OnnxUnavailable(f"ONNX export of {model_path.name} failed: {type(e).__name__}: {e}") from e
        raw.unlink()
        difference = _largest_difference(model_path, tmp / "model.onnx")
        if not difference <= TOLERANCE:
            raise OnnxUnavailable(f"the ONNX export differs from the torch model by {difference:.2g} (> {TOLERANCE})")
        atomic_write(tmp / "verified.json", json.dumps({"max_abs_difference": difference, "probes": len(PROBES)}))
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _trace(model_path: Path, out: Path) -> None:
    """Trace BERT + mean pooling + normalisation into one ONNX graph with dynamic batch and length."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    model = AutoModel.from_pretrained(str(model_path), attn_implementation="eager", local_files_only=True).eval()

    class SentenceEncoder(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    ids = torch.ones(2, 16, dtype=torch.long)
    inputs = ("input_ids", "attention_mask", "token_type_ids")
    # the exporter's deprecation and tracer notices say nothing to a user; the probes check the result
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            SentenceEncoder(model),
            (ids, ids, torch.zeros_like(ids)),
            str(out),
            input_names=list(inputs),
            output_names=["embedding"],
            dynamic_axes={**{n: {0: "batch", 1: "length"} for n in inputs}, "embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,  # the TorchScript exporter: no onnxscript, and BERT traces cleanly
        )


def _largest_difference(model_path: Path, onnx_file: Path) -> float:
    """The largest absolute difference between sentence-transformers' vectors and the ONNX file's."""
    import numpy as np

    from .onnx_embedder import OnnxEmbedder
    from .torch_embedder import Embedder

    texts = PROBES + [p.upper() for p in PROBES]
    reference = Embedder(model_path, batch_size=4).embed(texts)
    candidate = OnnxEmbedder(model_path, onnx_file, batch_size=4).embed(texts)
    one_by_one = np.vstack([OnnxEmbedder(model_path, onnx_file).embed([t]) for t in texts])
    return float(max(np.abs(reference - candidate).max(), np.abs(reference - one_by_one).max()))


if __name__ == "__main__":  # scripts/dev.sh setup: export now rather than on the first question
    from ...tokens import embedder_model_path

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    try:
        path = exported_model(embedder_model_path())
    except OnnxUnavailable as e:
        raise SystemExit(f"longqa: {e}; questions will embed through sentence-transformers") from None
    print(f"ONNX embedder: {path} ({json.loads((path.parent / 'verified.json').read_text())})")

"""Indexing speed: `IndexStore.index(doc, 150)` against its floor and against the usual LangChain recipe.

The document (>= --words words) is distinct HotpotQA and MuSiQue paragraphs in a seeded order. Each
method runs in its own subprocess (so its peak RSS, `ru_maxrss`, is its own: tracemalloc does not see
torch's or Chroma's native allocations), model loading timed apart from indexing:

  encode     bare `SentenceTransformer.encode` of longqa's own 150-token chunk texts (the floor:
             chunking done before the clock starts), batch 64, normalised
  longqa     `IndexStore.index(document, 150)` into a fresh home: chunking, token counts, BM25
             tokens, embedding (through ONNX Runtime, the default since issue #32, batches of 16),
             Chroma writes, manifest
  longqa-b64 the same with batches of 64 (ONNX Runtime's batch before 2026-11-26)
  longqa-torch  the same with the sentence-transformers (torch) embedder and batches of 64: the path
             before issue #32
  langchain  RecursiveCharacterTextSplitter (chunk_size = longqa's mean chunk length in characters,
             no overlap) + langchain_chroma.Chroma.from_documents with HuggingFaceEmbeddings of the
             same local model + BM25Retriever + EnsembleRetriever(weights 0.5/0.5)

    python bench/indexing_speed.py                 # 150k words, each method once
    python bench/indexing_speed.py --words 30000   # quick
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import big_document, machine, md_table, offline_env, save  # noqa: E402

METHODS = ("encode", "longqa", "longqa-b64", "longqa-torch", "langchain")
GRANULARITY = 150


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _longqa_chunks(text: str, max_tokens: int | None = None) -> list[str]:
    """longqa's chunk texts at GRANULARITY; with `max_tokens`, its dense units (what it embeds)."""
    from longqa.retrieval import document_from_text
    from longqa.retrieval.index.chunk_index import dense_units
    from longqa.retrieval.index.chunking import chunk_document

    chunks = chunk_document(document_from_text(text), GRANULARITY)
    return [u[2] for u in dense_units(chunks, max_tokens)] if max_tokens else [c.text for c in chunks]


def worker(method: str, text: str, home: Path, chunk_chars: int) -> dict:
    """Run one method in this process; return its timings and memory."""
    from longqa.retrieval.tokens import embedder_model_path

    model_path = str(embedder_model_path())
    t0 = time.perf_counter()
    if method == "encode":
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(model_path, device="cpu", local_files_only=True)
        load_s, rss_load = time.perf_counter() - t0, _rss_mib()
        texts = _longqa_chunks(text, model.max_seq_length - 2)  # as Embedder.max_tokens
        t0 = time.perf_counter()
        model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        n_chunks, chars = len(texts), sum(map(len, texts))
    elif method in ("longqa", "longqa-b64", "longqa-torch"):
        from longqa.retrieval import IndexSettings, IndexStore, document_from_text
        from longqa.retrieval.environment import EMBED_BATCH_SIZE
        from longqa.retrieval.index.embed.embedder import get_embedder

        backend = "torch" if method == "longqa-torch" else "onnx"
        batch = EMBED_BATCH_SIZE if method == "longqa" else 64
        store = IndexStore(IndexSettings(home=home), embedder=get_embedder(backend=backend, batch_size=batch))
        store.embedder  # noqa: B018 - load the model before the clock
        load_s, rss_load = time.perf_counter() - t0, _rss_mib()
        document = document_from_text(text)
        t0 = time.perf_counter()
        index = store.index(document, GRANULARITY)
        n_chunks, chars = len(index.chunks), sum(len(c.text) for c in index.chunks)
    elif method == "langchain":
        from langchain_chroma import Chroma
        from langchain_classic.retrievers import EnsembleRetriever
        from langchain_community.embeddings import HuggingFaceEmbeddings
        from langchain_community.retrievers import BM25Retriever
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        embedding = HuggingFaceEmbeddings(
            model_name=model_path,
            model_kwargs={"device": "cpu", "local_files_only": True},
            encode_kwargs={"normalize_embeddings": True, "batch_size": 64},
        )
        embedding.embed_query("warm up")
        load_s, rss_load = time.perf_counter() - t0, _rss_mib()
        t0 = time.perf_counter()
        docs = RecursiveCharacterTextSplitter(chunk_size=chunk_chars, chunk_overlap=0).create_documents([text])
        store = Chroma.from_documents(
            docs,
            embedding,
            persist_directory=str(home),
            collection_name="bench",
            collection_metadata={"hnsw:space": "cosine"},
        )
        bm25 = BM25Retriever.from_documents(docs, k=5)
        EnsembleRetriever(retrievers=[bm25, store.as_retriever(search_kwargs={"k": 5})], weights=[0.5, 0.5])
        n_chunks, chars = len(docs), sum(len(d.page_content) for d in docs)
    else:
        raise ValueError(method)
    index_s = time.perf_counter() - t0
    return {
        "method": method,
        "load_s": load_s,
        "index_s": index_s,
        "n_chunks": n_chunks,
        "chars": chars,
        "rss_after_load_mib": rss_load,
        "peak_rss_mib": _rss_mib(),
        "loadavg": os.getloadavg()[0],
    }


def run_method(method: str, doc_file: Path, home: Path, chunk_chars: int) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        method,
        "--doc",
        str(doc_file),
        "--home",
        str(home),
        "--chunk-chars",
        str(chunk_chars),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"{method} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--words", type=int, default=150_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    p.add_argument("--repeats", type=int, default=1, help="rounds; each round runs every method once, in order")
    p.add_argument("--keep-index", type=Path, help="build the first longqa index here (a new directory) and keep it")
    p.add_argument("--worker", choices=METHODS, help=argparse.SUPPRESS)
    p.add_argument("--doc", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--chunk-chars", type=int, default=600, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    offline_env()
    if args.worker:
        result = worker(args.worker, args.doc.read_text("utf-8"), args.home, args.chunk_chars)
        print("RESULT " + json.dumps(result))
        return
    if args.keep_index and args.keep_index.exists():
        p.error(f"--keep-index {args.keep_index} exists; name a new directory")
    text, _ = big_document(args.words, args.seed)
    n_words = len(text.split())
    chunk_chars = round(statistics.fmean(map(len, _longqa_chunks(text))))
    tmp = Path(tempfile.mkdtemp(prefix="longqa-indexing-"))
    doc_file = tmp / "document.txt"
    doc_file.write_text(text, "utf-8")
    info = {
        "machine": machine(),
        "words": n_words,
        "chars": len(text),
        "seed": args.seed,
        "langchain_chunk_chars": chunk_chars,
        "runs": [],
    }
    print(f"document: {n_words:,} words, {len(text):,} characters; langchain chunk_size={chunk_chars}", file=sys.stderr)
    try:
        for r in range(args.repeats):
            for method in args.methods:
                keep = method == "longqa" and args.keep_index and not any(x["method"] == "longqa" for x in info["runs"])
                home = args.keep_index if keep else tmp / f"{method}-{r}"
                result = run_method(method, doc_file, home, chunk_chars)
                info["runs"].append(result)
                print(
                    f"round {r + 1} {method}: {result['index_s']:.1f} s ({n_words / result['index_s']:,.0f} words/s)"
                    f", load avg {result['loadavg']:.1f}",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    by_method = {m: [x for x in info["runs"] if x["method"] == m] for m in args.methods}
    floor = statistics.median(x["index_s"] for x in by_method["encode"]) if by_method.get("encode") else None
    base = by_method.get("longqa-torch")  # the path before issue #32: each round's speed-up against it
    rows = []
    for m, runs in by_method.items():
        s = statistics.median(x["index_s"] for x in runs)
        ratios = [b["index_s"] / x["index_s"] for x, b in zip(runs, base or [], strict=False)]
        load = statistics.median(x["load_s"] for x in runs)
        rows.append(
            [
                m,
                runs[0]["n_chunks"],
                f"{runs[0]['chars']:,}",
                f"{load:.1f}",
                " / ".join(f"{x['index_s']:.1f}" for x in runs),
                f"{n_words / s:,.0f}",
                f"{s / floor:.2f}x" if floor else "-",
                f"{statistics.median(ratios):.2f}x ({' / '.join(f'{r:.2f}' for r in ratios)})" if ratios else "-",
                f"{max(x['rss_after_load_mib'] for x in runs):,.0f}",
                f"{max(x['peak_rss_mib'] for x in runs):,.0f}",
            ]
        )
    head = [
        "method",
        "chunks",
        "chars embedded",
        "model load s",
        "index s (each run)",
        "words/s (median)",
        "time vs encode",
        "speed vs longqa-torch, same round (median; each)",
        "RSS after load MiB",
        "peak RSS MiB",
    ]
    info["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"### Indexing {n_words:,} words at granularity {GRANULARITY} ({args.repeats} round(s))\n")
    print(md_table(head, rows))
    print(f"\nmachine: {info['machine']}")
    print(f"results: {save('indexing_speed', info)}")


if __name__ == "__main__":
    main()

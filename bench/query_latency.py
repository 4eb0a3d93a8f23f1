"""Query latency of hybrid search on a warm index, and what BM25 costs at 100k chunks.

Part 1 (real index): the indexing benchmark's document (distinct HotpotQA + MuSiQue paragraphs,
>= --words words) indexed at granularity 150; --queries HotpotQA questions about it (each searched once,
after 5 warm-up queries not counted) through `Searcher.search(k=5, hybrid 1:1, depth 20)`, then, per
query, each part alone: query embedding, Chroma query (`ChunkIndex.dense_top`), BM25
(`SparseIndex.top`; rank-bm25 at this size), min-max fusion; and the query embedded once more with
torch on one thread (on a busy machine torch's default of one thread per core can be many times
slower for a single short text). Model load and index build are excluded.

Part 2 (100k chunks, BM25 built for real, dense simulated): --scale chunks of real sentences drawn at
random (seeded) from the shared data, each about as long as the real index's 150-token chunks. BM25:
longqa's `SparseIndex` with each backend, rank-bm25 (Okapi) and bm25s (Robertson, the same k1 1.5 and
b 0.75; the default from 20,000 chunks), on the same tokens and queries, with their top-20 agreement.
Dense: embedding 100k chunks (~11M words) would take hours here, so the vectors are random unit vectors
(384-d): exact search with numpy, and a Chroma HNSW collection (cosine) with --chroma.

    python bench/query_latency.py --home DIR     # DIR from indexing_speed.py --keep-index (else builds)
    python bench/query_latency.py --words 30000 --scale 20000 --queries 30   # quick
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import big_document, machine, md_table, offline_env, save  # noqa: E402

GRANULARITY, K, DEPTH = 150, 5, 20


def ms_stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {"median_ms": 1000 * statistics.median(ordered), "p95_ms": 1000 * p95, "n": len(ordered)}


def timed(fn: Callable, *args, **kwargs) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def warm_latency(home: Path, text: str, queries: list[str]) -> tuple[dict, dict, list[str]]:
    from longqa.retrieval import IndexSettings, IndexStore, Searcher, document_from_text, fuse

    store = IndexStore(IndexSettings(home=home))
    store.embedder  # noqa: B018 - model load is excluded
    document = document_from_text(text, source="bench:query-latency")
    cached = store.is_indexed(document.doc_id, GRANULARITY)
    build_s, index = timed(store.index, document, GRANULARITY)
    searcher = Searcher(store, [document])
    for q in queries[:5]:  # warm-up: BLAS, Chroma's HNSW pages, BM25 arrays
        searcher.search(q, k=K, granularity=GRANULARITY, depth=DEPTH)
    import torch

    threads = torch.get_num_threads()
    parts: dict[str, list[float]] = {
        k: []
        for k in (
            "hybrid search",
            "embed query",
            "chroma query",
            "dense (embed + chroma)",
            "bm25",
            "fusion",
            "embed query, 1 torch thread",
        )
    }
    doc_id = document.doc_id
    for q in queries[5:]:
        parts["hybrid search"].append(timed(searcher.search, q, k=K, granularity=GRANULARITY, depth=DEPTH)[0])
        t_embed, vector = timed(lambda q=q: store.embedder.embed([q])[0])
        t_chroma, dense = timed(index.dense_top, vector, DEPTH)
        t_bm25, sparse = timed(index.sparse.top, q, DEPTH)
        t_fuse, _ = timed(fuse, {(doc_id, c): s for c, s in dense}, {(doc_id, r): s for r, s in sparse}, (1.0, 1.0))
        parts["embed query"].append(t_embed)
        parts["chroma query"].append(t_chroma)
        parts["dense (embed + chroma)"].append(t_embed + t_chroma)
        parts["bm25"].append(t_bm25)
        parts["fusion"].append(t_fuse)
        torch.set_num_threads(1)  # the same query again on one thread (see the README: CPU contention)
        parts["embed query, 1 torch thread"].append(timed(store.embedder.embed, [q])[0])
        torch.set_num_threads(threads)
    words = [len(c.text.split()) for c in index.chunks]
    meta = {
        "bm25_backend": index.sparse.backend,
        "n_chunks": len(index.chunks),
        "n_units": index.n_units,
        "mean_chunk_words": statistics.fmean(words),
        "index_was_cached": cached,
        "index_build_s": round(build_s, 1),
    }
    return {k: ms_stats(v) for k, v in parts.items()}, meta, [c.text for c in index.chunks]


def sentence_pool() -> list[str]:
    from longqa.evals.long_contexts import load_hotpotqa, load_musique

    pool = [
        s.strip()
        for split in ("a", "b")
        for raw in load_hotpotqa(split)
        for sents in raw["context"]["sentences"]
        for s in sents
        if s.strip()
    ]
    pool += [
        s
        for raw in load_musique()
        for p in raw["paragraphs"]
        for s in re.split(r"(?<=[.!?])\s+", p["paragraph_text"])
        if s.strip()
    ]
    return list(dict.fromkeys(pool))


def synthetic_chunks(n: int, mean_words: float, seed: int) -> list[str]:
    """`n` chunks of random real sentences, each filled up to about `mean_words` words."""
    rng, pool = random.Random(seed), sentence_pool()
    chunks = []
    for _ in range(n):
        parts, words = [], 0
        while words < mean_words:
            s = pool[rng.randrange(len(pool))]
            parts.append(s)
            words += len(s.split())
        chunks.append(" ".join(parts))
    return chunks


def bm25_at_scale(chunks: list[str], queries: list[str]) -> tuple[dict, dict]:
    """longqa's `SparseIndex` with each backend on the same tokens and queries."""
    from longqa.retrieval.bm25 import SparseIndex, bm25_tokens

    tokenize_s, tokens = timed(lambda: [bm25_tokens(c) for c in chunks])
    indexes = {name: timed(SparseIndex, tokens, backend=name) for name in ("rank-bm25", "bm25s")}
    times: dict[str, list[float]] = {name: [] for name in indexes}
    overlap = []
    for q in queries[:3]:  # warm-up
        for _, index in indexes.values():
            index.top(q, DEPTH)
    for q in queries:
        tops = {}
        for name, (_, index) in indexes.items():
            t, top = timed(index.top, q, DEPTH)
            times[name].append(t)
            tops[name] = {row for row, _ in top}
        a, b = tops["rank-bm25"], tops["bm25s"]
        if a or b:
            overlap.append(len(a & b) / max(len(a), len(b)))
    stats = {
        f"{name} (SparseIndex)": {**ms_stats(times[name]), "build_s": build_s} for name, (build_s, _) in indexes.items()
    }
    meta = {
        "tokenize_s": tokenize_s,
        "top20_agreement": statistics.fmean(overlap) if overlap else None,
        "mean_tokens": statistics.fmean(map(len, tokens)),
    }
    return stats, meta


def dense_at_scale(n: int, queries: int, seed: int, with_chroma: bool, home: Path) -> dict:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, 384), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    qs = rng.standard_normal((queries, 384), dtype=np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)

    def numpy_top(q: np.ndarray) -> np.ndarray:
        scores = vectors @ q
        best = np.argpartition(-scores, DEPTH)[:DEPTH]
        return best[np.argsort(-scores[best])]

    out = {"numpy exact (random vectors)": ms_stats([timed(numpy_top, q)[0] for q in qs])}
    if with_chroma:
        import chromadb
        from chromadb.config import Settings

        settings = Settings(anonymized_telemetry=False)
        client = chromadb.PersistentClient(path=str(home / "chroma-scale"), settings=settings)
        col = client.create_collection("scale", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
        t0 = time.perf_counter()
        for i in range(0, n, 5000):
            col.add(
                ids=[str(j) for j in range(i, min(n, i + 5000))],
                embeddings=vectors[i : i + 5000],
                metadatas=[{"chunk": j} for j in range(i, min(n, i + 5000))],
            )
        build_s = time.perf_counter() - t0
        for q in qs[:3]:
            col.query(query_embeddings=[q.tolist()], n_results=DEPTH, include=["metadatas", "distances"])
        t = [
            timed(col.query, query_embeddings=[q.tolist()], n_results=DEPTH, include=["metadatas", "distances"])[0]
            for q in qs
        ]
        out["chroma HNSW (random vectors)"] = {**ms_stats(t), "build_s": build_s}
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--words", type=int, default=150_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--scale", type=int, default=100_000, help="chunks in the scale test (0 = skip)")
    p.add_argument(
        "--chroma",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time Chroma HNSW on the random vectors at scale",
    )
    p.add_argument("--home", type=Path, help="index directory holding (or to hold) the document's index; kept")
    args = p.parse_args(argv)
    offline_env()
    info: dict = {"machine": machine(), "args": {k: str(v) for k, v in vars(args).items()}}
    text, questions = big_document(args.words, args.seed)
    queries = random.Random(args.seed).sample(questions, min(len(questions), args.queries + 5))
    tmp = Path(tempfile.mkdtemp(prefix="longqa-latency-"))
    try:
        warm, meta, doc_chunks = warm_latency(args.home or tmp, text, queries)
        info.update(warm=warm, warm_meta=meta)
        print(
            f"### Warm hybrid search: {len(text.split()):,} words, {meta['n_chunks']} chunks of <= {GRANULARITY} "
            f"tokens, k={K}, depth={DEPTH}, {len(queries) - 5} queries\n"
        )
        print(
            md_table(
                ["part", "median ms", "p95 ms"],
                [[k, f"{v['median_ms']:.1f}", f"{v['p95_ms']:.1f}"] for k, v in warm.items()],
            )
        )
        print(f"\nindex: {meta}", flush=True)
        if args.scale:
            chunks = synthetic_chunks(args.scale, meta["mean_chunk_words"], args.seed)
            sparse, sparse_meta = bm25_at_scale(chunks, queries)
            dense = dense_at_scale(args.scale, len(queries), args.seed, args.chroma, tmp)
            small, _ = bm25_at_scale(doc_chunks, queries)
            info.update(
                scale={
                    "n": args.scale,
                    "bm25": sparse,
                    "bm25_meta": sparse_meta,
                    "dense": dense,
                    "bm25_document_scale": small,
                }
            )
            rows = [
                [f"{k} @ {meta['n_chunks']:,} chunks", "-", f"{v['median_ms']:.2f}", f"{v['p95_ms']:.2f}"]
                for k, v in small.items()
            ]
            rows += [
                [
                    f"{k} @ {args.scale:,} chunks",
                    f"{v.get('build_s', 0):.1f}",
                    f"{v['median_ms']:.2f}",
                    f"{v['p95_ms']:.2f}",
                ]
                for k, v in {**sparse, **dense}.items()
            ]
            print(
                f"\n### Per-query cost at {args.scale:,} chunks (mean {sparse_meta['mean_tokens']:.0f} BM25 tokens "
                f"each; tokenizing took {sparse_meta['tokenize_s']:.1f} s)\n"
            )
            print(md_table(["retriever", "build s", "median ms", "p95 ms"], rows))
            print(f"\nrank-bm25 vs bm25s top-{DEPTH} agreement: {100 * (sparse_meta['top20_agreement'] or 0):.1f}%")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    info["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"\nmachine: {info['machine']}")
    print(f"results: {save('query_latency', info)}")


if __name__ == "__main__":
    main()

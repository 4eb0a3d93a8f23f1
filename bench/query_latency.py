"""Query latency of hybrid search on a warm index, and what BM25 costs at 100k chunks.

Part 1 (real index): the indexing benchmark's document (distinct HotpotQA + MuSiQue paragraphs,
>= --words words) indexed at granularity 150; --queries HotpotQA questions about it (each searched once,
after 5 warm-up queries not counted) through `Searcher.search(k=5, hybrid 1:1, depth 20)`, then, per
query, each part alone: query embedding, Chroma query (`ChunkIndex.dense_top`), BM25
(`SparseIndex.top`, rank-bm25), min-max fusion. Model load and index build are excluded.

Part 2 (100k chunks, BM25 built for real, dense simulated): --scale chunks of real sentences drawn at
random (seeded) from the shared data, each about as long as the real index's 150-token chunks. BM25:
rank-bm25 through longqa's `SparseIndex` against `bm25s` (method "robertson", k1 1.5, b 0.75: the
Okapi formula rank-bm25 uses) on the same tokens and queries, with their top-20 agreement. Dense:
embedding 100k chunks (~11M words) would take hours here, so the vectors are random unit vectors
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
    from retrieval import IndexSettings, IndexStore, Searcher, document_from_text, fuse

    store = IndexStore(IndexSettings(home=home))
    store.embedder  # noqa: B018 - model load is excluded
    document = document_from_text(text, source="bench:query-latency")
    cached = store.is_indexed(document.doc_id, GRANULARITY)
    build_s, index = timed(store.index, document, GRANULARITY)
    searcher = Searcher(store, [document])
    for q in queries[:5]:  # warm-up: BLAS, Chroma's HNSW pages, BM25 arrays
        searcher.search(q, k=K, granularity=GRANULARITY, depth=DEPTH)
    parts: dict[str, list[float]] = {k: [] for k in ("hybrid search", "embed query", "chroma query",
                                                      "dense (embed + chroma)", "bm25 (rank-bm25)", "fusion")}
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
        parts["bm25 (rank-bm25)"].append(t_bm25)
        parts["fusion"].append(t_fuse)
    words = [len(c.text.split()) for c in index.chunks]
    meta = {"n_chunks": len(index.chunks), "n_units": index.n_units, "mean_chunk_words": statistics.fmean(words),
            "index_was_cached": cached, "index_build_s": round(build_s, 1)}
    return {k: ms_stats(v) for k, v in parts.items()}, meta, [c.text for c in index.chunks]


def sentence_pool() -> list[str]:
    from evals.long_contexts import load_hotpotqa, load_musique

    pool = [s.strip() for split in ("a", "b") for raw in load_hotpotqa(split)
            for sents in raw["context"]["sentences"] for s in sents if s.strip()]
    pool += [s for raw in load_musique() for p in raw["paragraphs"]
             for s in re.split(r"(?<=[.!?])\s+", p["paragraph_text"]) if s.strip()]
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
    import bm25s

    from retrieval.bm25 import SparseIndex, bm25_tokens

    tokenize_s, tokens = timed(lambda: [bm25_tokens(c) for c in chunks])
    rank_build_s, rank = timed(SparseIndex, tokens)
    fast = bm25s.BM25(method="robertson", k1=1.5, b=0.75)
    fast_build_s, _ = timed(fast.index, tokens, show_progress=False)
    vocab = fast.vocab_dict

    def fast_top(q: str) -> list[int]:
        terms = [t for t in bm25_tokens(q) if t in vocab]
        if not terms:
            return []
        docs, scores = fast.retrieve([terms], k=DEPTH, show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    rank_t, fast_t, overlap = [], [], []
    for q in queries[:3]:  # warm-up
        rank.top(q, DEPTH)
        fast_top(q)
    for q in queries:
        t, top_rank = timed(rank.top, q, DEPTH)
        rank_t.append(t)
        t, top_fast = timed(fast_top, q)
        fast_t.append(t)
        a, b = {r for r, _ in top_rank}, set(top_fast)
        if a or b:
            overlap.append(len(a & b) / max(len(a), len(b)))
    stats = {"rank-bm25 (SparseIndex)": {**ms_stats(rank_t), "build_s": rank_build_s},
             "bm25s (robertson)": {**ms_stats(fast_t), "build_s": fast_build_s}}
    meta = {"tokenize_s": tokenize_s, "top20_agreement": statistics.fmean(overlap) if overlap else None,
            "mean_tokens": statistics.fmean(map(len, tokens))}
    return stats, meta


def chunk_map_at_scale(chunks: list[str], repeats: int = 20) -> dict:
    """What `Searcher.search` spends per call rebuilding its (doc_id, chunk index) -> chunk map of every
    chunk of every index (retrieval/search.py), with real `Chunk` objects."""
    from retrieval.documents import Chunk

    objects = [Chunk(doc_id="d" * 64, index=i, start=0, end=len(t), paragraph_ids=[i], n_tokens=0, text=t)
               for i, t in enumerate(chunks)]
    owner = object()
    return ms_stats([timed(lambda: {(c.doc_id, c.index): (owner, c) for c in objects})[0] for _ in range(repeats)])


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
            col.add(ids=[str(j) for j in range(i, min(n, i + 5000))], embeddings=vectors[i : i + 5000],
                    metadatas=[{"chunk": j} for j in range(i, min(n, i + 5000))])
        build_s = time.perf_counter() - t0
        for q in qs[:3]:
            col.query(query_embeddings=[q.tolist()], n_results=DEPTH, include=["metadatas", "distances"])
        t = [timed(col.query, query_embeddings=[q.tolist()], n_results=DEPTH, include=["metadatas", "distances"])[0]
             for q in qs]
        out["chroma HNSW (random vectors)"] = {**ms_stats(t), "build_s": build_s}
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--words", type=int, default=150_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--scale", type=int, default=100_000, help="chunks in the scale test (0 = skip)")
    p.add_argument("--chroma", action=argparse.BooleanOptionalAction, default=True,
                   help="also time Chroma HNSW on the random vectors at scale")
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
        print(f"### Warm hybrid search: {len(text.split()):,} words, {meta['n_chunks']} chunks of <= {GRANULARITY} "
              f"tokens, k={K}, depth={DEPTH}, {len(queries) - 5} queries\n")
        print(md_table(["part", "median ms", "p95 ms"],
                       [[k, f"{v['median_ms']:.1f}", f"{v['p95_ms']:.1f}"] for k, v in warm.items()]))
        print(f"\nindex: {meta}", flush=True)
        if args.scale:
            chunks = synthetic_chunks(args.scale, meta["mean_chunk_words"], args.seed)
            sparse, sparse_meta = bm25_at_scale(chunks, queries)
            dense = dense_at_scale(args.scale, len(queries), args.seed, args.chroma, tmp)
            dense["Searcher.search chunk map (per call)"] = chunk_map_at_scale(chunks)
            small, _ = bm25_at_scale(doc_chunks, queries)
            info.update(scale={"n": args.scale, "bm25": sparse, "bm25_meta": sparse_meta, "dense": dense,
                               "bm25_document_scale": small})
            rows = [[f"{k} @ {meta['n_chunks']:,} chunks", "-", f"{v['median_ms']:.2f}", f"{v['p95_ms']:.2f}"]
                    for k, v in small.items()]
            rows += [[f"{k} @ {args.scale:,} chunks", f"{v.get('build_s', 0):.1f}", f"{v['median_ms']:.2f}",
                      f"{v['p95_ms']:.2f}"] for k, v in {**sparse, **dense}.items()]
            print(f"\n### Per-query cost at {args.scale:,} chunks (mean {sparse_meta['mean_tokens']:.0f} BM25 tokens "
                  f"each; tokenizing took {sparse_meta['tokenize_s']:.1f} s)\n")
            print(md_table(["retriever", "build s", "median ms", "p95 ms"], rows))
            print(f"\nrank-bm25 vs bm25s top-{DEPTH} agreement: {100 * (sparse_meta['top20_agreement'] or 0):.1f}%")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    info["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    print(f"\nmachine: {info['machine']}")
    print(f"results: {save('query_latency', info)}")


if __name__ == "__main__":
    main()

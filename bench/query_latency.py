"""Query latency of hybrid search on a warm library, and what the library's BM25 costs at 100k chunks.

Part 1 (real index): the indexing benchmark's document (distinct HotpotQA + MuSiQue paragraphs,
>= --words words) as the library `Searcher(store, [document])` makes for it, at granularity 150;
--queries HotpotQA questions about it (each searched once, after 5 warm-up queries not counted)
through `Searcher.search(k=5, hybrid 1:1, depth 20)` (its cached query vector dropped first, so the
search embeds the query as a lone run does), then the same search with the query vector cached, then,
per query, each part alone: query embedding, the library's Chroma query (`Library.dense_top`: one
collection for the whole library, document id as metadata), the library's BM25 (`LibraryBM25.top`:
bm25s, Lucene IDF), min-max fusion (`fuse`); and the query embedded once more with torch on one
thread (on a busy machine torch's default of one thread per core can be many times slower for a
single short text). Model load and the library build are excluded (the build time is reported).

Part 2 (100k chunks, BM25 built for real, dense simulated): --scale chunks of real sentences drawn at
random (seeded) from the shared data, each about as long as the real index's 150-token chunks, split
into --docs documents. BM25: `LibraryBM25.build` over them (build time; query over the whole library,
and over one of its documents, as a question naming one file does), and for reference rank-bm25's
`BM25Okapi.get_scores` (Okapi IDF, the same k1 1.5 and b 0.75) on the same tokens and queries, with
the two's top-20 agreement; the same pair at document scale (the real document's chunks). Dense:
embedding 100k chunks (~11M words) would take hours here, so the vectors are random unit vectors
(384-d): exact search with numpy, and a Chroma HNSW collection (cosine, document id as metadata, as a
library's) with --chroma.

    python bench/query_latency.py --home DIR     # DIR from indexing_speed.py --keep-index (else builds)
    python bench/query_latency.py --words 30000 --scale 20000 --queries 30   # quick
"""

from __future__ import annotations

import argparse
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

from bench.common import big_document, finish, machine, md_table, ms_stats, offline_env, timing_table  # noqa: E402

GRANULARITY, K, DEPTH = 150, 5, 20


def timed(fn: Callable, *args, **kwargs) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def warm_latency(home: Path, text: str, queries: list[str]) -> tuple[dict, dict, list[str]]:
    from longqa.retrieval import IndexSettings, IndexStore, Searcher, document_from_text, fuse
    from longqa.retrieval.search.search import forget_query

    store = IndexStore(IndexSettings(home=home))
    store.embedder  # noqa: B018 - model load is excluded
    document = document_from_text(text, source="bench:query-latency")
    cached = store.is_indexed(document.doc_id, GRANULARITY)
    t0 = time.perf_counter()
    searcher = Searcher(store, [document])  # the library made for this document
    manifest = searcher.indexes(GRANULARITY)  # chunked and embedded, or assembled from the cached parts
    build_s = time.perf_counter() - t0
    library, part = searcher.library, manifest.parts[GRANULARITY]
    index = store.index(document, GRANULARITY)
    for q in queries[:5]:  # warm-up: BLAS, Chroma's HNSW pages, the BM25 matrix
        searcher.search(q, k=K, granularity=GRANULARITY, depth=DEPTH)
    import torch

    threads = torch.get_num_threads()
    parts: dict[str, list[float]] = {
        k: []
        for k in (
            "hybrid search",
            "hybrid search, query vector cached",
            "embed query",
            "chroma query (Library.dense_top)",
            "dense (embed + chroma)",
            "bm25 (LibraryBM25.top)",
            "fusion",
            "embed query, 1 torch thread",
        )
    }
    allowed = {document.doc_id}
    for q in queries[5:]:
        forget_query(q)  # the search embeds the query, as a lone run does
        parts["hybrid search"].append(timed(searcher.search, q, k=K, granularity=GRANULARITY, depth=DEPTH)[0])
        parts["hybrid search, query vector cached"].append(
            timed(searcher.search, q, k=K, granularity=GRANULARITY, depth=DEPTH)[0]
        )
        t_embed, vector = timed(lambda q=q: store.embedder.embed([q])[0])
        t_chroma, dense = timed(library.dense_top, GRANULARITY, part, vector, DEPTH, allowed, False)
        t_bm25, sparse = timed(library.bm25(part).top, q, DEPTH, None)
        t_fuse, _ = timed(fuse, dense, sparse, (1.0, 1.0))
        parts["embed query"].append(t_embed)
        parts["chroma query (Library.dense_top)"].append(t_chroma)
        parts["dense (embed + chroma)"].append(t_embed + t_chroma)
        parts["bm25 (LibraryBM25.top)"].append(t_bm25)
        parts["fusion"].append(t_fuse)
        torch.set_num_threads(1)  # the same query again on one thread (see the README: CPU contention)
        parts["embed query, 1 torch thread"].append(timed(store.embedder.embed, [q])[0])
        torch.set_num_threads(threads)
    words = [len(c.text.split()) for c in index.chunks]
    meta = {
        "library": library.name,
        "library_version": manifest.version,
        "bm25": "LibraryBM25 (bm25s, Lucene IDF)",
        "n_chunks": part.n_chunks,
        "n_units": part.n_units,
        "mean_chunk_words": statistics.fmean(words),
        "index_was_cached": cached,
        "library_build_s": round(build_s, 1),
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


def split_documents(n: int, docs: int) -> list[tuple[int, int]]:
    """(start, end) rows of `docs` consecutive documents of about equal size over `n` chunks."""
    docs = max(1, min(docs, n))
    bounds = [round(i * n / docs) for i in range(docs + 1)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def rank_bm25_reference(tokens: list[list[str]]) -> tuple[float, Callable[[str], list[int]]] | None:
    """rank-bm25's Okapi BM25 on the same tokens: (build seconds, query -> top rows with a positive
    score), or None when rank-bm25 is not installed (longqa no longer uses it)."""
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        return None
    from longqa.retrieval.bm25 import bm25_tokens

    # rank-bm25 divides by the corpus size and average length: empty chunks get a placeholder
    build_s, bm25 = timed(BM25Okapi, [t or ["\x00"] for t in tokens])

    def top(query: str) -> list[int]:
        terms = bm25_tokens(query)
        if not terms:
            return []
        scores = bm25.get_scores(terms)
        depth = min(DEPTH, len(scores))
        best = np.argpartition(-scores, depth - 1)[:depth]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [int(i) for i in best if scores[i] > 0]

    return build_s, top


def bm25_at_scale(chunks: list[str], queries: list[str], docs: int) -> tuple[dict, dict]:
    """`LibraryBM25` over `chunks` split into `docs` documents, and rank-bm25 on the same tokens."""
    from longqa.retrieval.bm25 import bm25_tokens
    from longqa.retrieval.index.library.library_bm25 import LibraryBM25

    tokenize_s, tokens = timed(lambda: [bm25_tokens(c) for c in chunks])
    spans = split_documents(len(tokens), docs)
    doc_ids = [f"doc{i:05d}" for i in range(len(spans))]
    build_s, library = timed(LibraryBM25.build, doc_ids, [tokens[a:b] for a, b in spans])
    start = dict(zip(doc_ids, (a for a, _ in spans), strict=True))
    reference = rank_bm25_reference(tokens)
    name = "LibraryBM25.top (bm25s, Lucene IDF)"
    one = f"LibraryBM25.top, 1 of {len(doc_ids)} documents allowed"
    ref = "rank-bm25 BM25Okapi.get_scores (reference)"
    times: dict[str, list[float]] = {name: []}
    if len(doc_ids) > 1:
        times[one] = []
    if reference is not None:
        times[ref] = []
    overlap = []
    for q in queries[:3]:  # warm-up
        library.top(q, DEPTH, None)
        if reference is not None:
            reference[1](q)
    for q in queries:
        t, top = timed(library.top, q, DEPTH, None)
        times[name].append(t)
        if one in times:
            times[one].append(timed(library.top, q, DEPTH, {doc_ids[len(doc_ids) // 2]})[0])
        if reference is not None:
            t, rows = timed(reference[1], q)
            times[ref].append(t)
            a, b = {start[d] + c for d, c in top}, set(rows)
            if a or b:
                overlap.append(len(a & b) / max(len(a), len(b)))
    builds = {name: build_s, one: None, ref: reference[0] if reference is not None else None}
    stats = {k: {**ms_stats(v), "build_s": builds[k]} for k, v in times.items()}
    meta = {
        "tokenize_s": tokenize_s,
        "documents": len(doc_ids),
        "rank_bm25": reference is not None,
        "top20_agreement": statistics.fmean(overlap) if overlap else None,
        "mean_tokens": statistics.fmean(map(len, tokens)),
    }
    return stats, meta


def dense_at_scale(n: int, docs: int, queries: int, seed: int, with_chroma: bool, home: Path) -> dict:
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
        spans = enumerate(split_documents(n, docs))
        metas = [{"doc_id": f"doc{d:05d}", "chunk": j - a} for d, (a, b) in spans for j in range(a, b)]
        t0 = time.perf_counter()
        for i in range(0, n, 5000):
            col.add(
                ids=[str(j) for j in range(i, min(n, i + 5000))],
                embeddings=vectors[i : i + 5000],
                metadatas=metas[i : i + 5000],
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


def ms(v: dict, key: str) -> str:
    return "-" if v.get(key) is None else f"{v[key]:.1f}"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--words", type=int, default=150_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--scale", type=int, default=100_000, help="chunks in the scale test (0 = skip)")
    p.add_argument("--docs", type=int, default=100, help="documents the scale test's chunks are split into")
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
    if len(queries) < 6:
        p.error(f"{len(questions)} questions about a {args.words:,}-word document: need 6 or more (raise --words)")
    tmp = Path(tempfile.mkdtemp(prefix="longqa-latency-"))
    try:
        warm, meta, doc_chunks = warm_latency(args.home or tmp, text, queries)
        info.update(warm=warm, warm_meta=meta)
        print(
            f"### Warm hybrid search: {len(text.split()):,} words, {meta['n_chunks']} chunks of <= {GRANULARITY} "
            f"tokens, k={K}, depth={DEPTH}, {len(queries) - 5} queries\n"
        )
        print(timing_table("part", warm))
        print(f"\nindex: {meta}", flush=True)
        if args.scale:
            chunks = synthetic_chunks(args.scale, meta["mean_chunk_words"], args.seed)
            sparse, sparse_meta = bm25_at_scale(chunks, queries, args.docs)
            dense = dense_at_scale(args.scale, args.docs, len(queries), args.seed, args.chroma, tmp)
            small, small_meta = bm25_at_scale(doc_chunks, queries, 1)
            info.update(
                scale={
                    "n": args.scale,
                    "bm25": sparse,
                    "bm25_meta": sparse_meta,
                    "dense": dense,
                    "bm25_document_scale": small,
                    "bm25_document_scale_meta": small_meta,
                }
            )
            rows = [
                [f"{k} @ {meta['n_chunks']:,} chunks", ms(v, "build_s"), f"{v['median_ms']:.2f}", f"{v['p95_ms']:.2f}"]
                for k, v in small.items()
            ]
            rows += [
                [f"{k} @ {args.scale:,} chunks", ms(v, "build_s"), f"{v['median_ms']:.2f}", f"{v['p95_ms']:.2f}"]
                for k, v in {**sparse, **dense}.items()
            ]
            print(
                f"\n### Per-query cost at {args.scale:,} chunks in {sparse_meta['documents']} documents (mean "
                f"{sparse_meta['mean_tokens']:.0f} BM25 tokens each; "
                f"tokenizing took {sparse_meta['tokenize_s']:.1f} s)\n"
            )
            print(md_table(["retriever", "build s", "median ms", "p95 ms"], rows))
            if not sparse_meta["rank_bm25"]:
                print("\nrank-bm25 is not installed: its reference rows are skipped")
            else:
                agreement = 100 * (sparse_meta["top20_agreement"] or 0)
                print(f"\nLibraryBM25 vs rank-bm25 top-{DEPTH} agreement at {args.scale:,} chunks: {agreement:.1f}%")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish("query_latency", info)


if __name__ == "__main__":
    main()

"""The work list of one library build shared by many workers, in the catalog's PostgreSQL (issue 49).

    longqa_build_items  library, build, key, source, state, owner, claimed_at, doc_id, reason
    longqa_builds       library, build, published

A build is named by the version it will publish (`v<N>`): every worker started over the same library
while it is published at N-1 joins it. Each worker adds the members it was given (the same paths on
every host: a shared volume), then claims batches of pending items with `FOR UPDATE SKIP LOCKED`
(two workers never take the same row; no scheduler of our own), renews its claims while it works,
and marks each item done with the document it became. A claim not renewed for `LEASE_S` (its worker
was killed or froze) is taken by the next worker that asks. The catalog's compare-and-set publishes
the build once (retrieval/index/library/library_build.py)."""

from __future__ import annotations

from dataclasses import dataclass

from ..embed.embedder_errors import EmbedderMismatch
from .catalog_postgres import SCHEMA_LOCK, PostgresCatalog

LEASE_S = 30.0  # a claim not renewed this long is another worker's to take

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS longqa_build_items (
        library TEXT NOT NULL, build TEXT NOT NULL, key TEXT NOT NULL, source TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending', owner TEXT, claimed_at TIMESTAMPTZ, doc_id TEXT, reason TEXT,
        PRIMARY KEY (library, build, key))""",
    """CREATE TABLE IF NOT EXISTS longqa_builds (
        library TEXT NOT NULL, build TEXT NOT NULL, published BOOLEAN NOT NULL DEFAULT false,
        PRIMARY KEY (library, build))""",
    "ALTER TABLE longqa_builds ADD COLUMN IF NOT EXISTS embedder TEXT",
]


def _create_tables(conn) -> None:
    """The tables, made by one worker at a time (concurrent `CREATE TABLE IF NOT EXISTS` collide)."""
    conn.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
    try:
        for statement in SCHEMA:
            conn.execute(statement)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))


@dataclass(frozen=True, order=True)
class Item:
    """One member of the build: its key (a file's resolved path) and the name it is shown by."""

    key: str
    source: str


class BuildQueue:
    """One build's items in PostgreSQL, for the worker `owner`."""

    def __init__(self, catalog: PostgresCatalog, library: str, build: str, owner: str, lease_s: float = LEASE_S):
        self.catalog, self.library, self.build, self.owner, self.lease_s = catalog, library, build, owner, lease_s
        self.catalog._run(_create_tables)

    def join(self, items: list[Item], embedder: str) -> None:
        """Add these members (those already listed stay as they are: done work is never redone); a
        worker whose embedder is not the build's (the first worker's) is refused: `EmbedderMismatch`."""
        rows = [(self.library, self.build, i.key, i.source) for i in items]

        def add(conn) -> None:
            with conn.transaction():
                conn.execute(
                    "INSERT INTO longqa_builds (library, build, embedder) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                    (self.library, self.build, embedder),
                )
                (theirs,) = conn.execute(
                    "SELECT embedder FROM longqa_builds WHERE library = %s AND build = %s", (self.library, self.build)
                ).fetchone()
                if theirs != embedder:
                    raise EmbedderMismatch(
                        f"library {self.library}: build {self.build} embeds with {theirs}, this worker with "
                        f"{embedder}; give every worker the same embedder settings (LONGQA_EMBEDDINGS_URL, ...)"
                    )
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO longqa_build_items (library, build, key, source) VALUES (%s, %s, %s, %s) "
                        "ON CONFLICT DO NOTHING",
                        rows,
                    )

        self.catalog._run(add)

    def claim(self, n: int) -> list[Item]:
        """Take up to `n` pending items (or items whose claim expired), in key order; [] when none is free."""
        query = """
            WITH free AS (
                SELECT key FROM longqa_build_items
                WHERE library = %s AND build = %s AND (state = 'pending'
                    OR (state = 'claimed' AND claimed_at < now() - make_interval(secs => %s)))
                ORDER BY key LIMIT %s FOR UPDATE SKIP LOCKED)
            UPDATE longqa_build_items i SET state = 'claimed', owner = %s, claimed_at = now()
            FROM free WHERE i.library = %s AND i.build = %s AND i.key = free.key
            RETURNING i.key, i.source"""
        params = (self.library, self.build, self.lease_s, n, self.owner, self.library, self.build)
        rows = self.catalog._run(lambda conn: conn.execute(query, params).fetchall())
        return sorted(Item(k, s) for k, s in rows)

    def renew(self) -> None:
        """Keep this worker's claims (called as it works: between embedding groups)."""
        self.catalog._write(
            "UPDATE longqa_build_items SET claimed_at = now() WHERE library = %s AND build = %s AND owner = %s "
            "AND state = 'claimed'",
            (self.library, self.build, self.owner),
        )

    def finish(self, key: str, doc_id: str | None, reason: str | None = None) -> None:
        """Mark an item done (with its document) or skipped (with why it cannot be read)."""
        state = "done" if doc_id else "skipped"
        self.catalog._write(
            "UPDATE longqa_build_items SET state = %s, doc_id = %s, reason = %s, owner = %s "
            "WHERE library = %s AND build = %s AND key = %s",
            (state, doc_id, reason, self.owner, self.library, self.build, key),
        )

    def counts(self) -> dict[str, int]:
        """Items by state."""
        rows = self.catalog._all(
            "SELECT state, count(*) FROM longqa_build_items WHERE library = %s AND build = %s GROUP BY state",
            (self.library, self.build),
        )
        return {state: int(n) for state, n in rows}

    def done(self) -> list[tuple[str, str, str]]:
        """(key, source, doc_id) of every item done, in key order."""
        return self.catalog._all(
            "SELECT key, source, doc_id FROM longqa_build_items WHERE library = %s AND build = %s AND state = 'done' "
            "ORDER BY key",
            (self.library, self.build),
        )

    def published(self) -> bool:
        """Whether a worker has published this build."""
        row = self.catalog._one(
            "SELECT published FROM longqa_builds WHERE library = %s AND build = %s", (self.library, self.build)
        )
        return bool(row and row[0])

    def mark_published(self, conn) -> None:
        """Record the publish (on the lock's connection, right after the compare-and-set) and drop the
        build's work list (its one row in `longqa_builds` stays: the others stop when they read it)."""
        key = (self.library, self.build)
        with conn.transaction():
            conn.execute("UPDATE longqa_builds SET published = true WHERE library = %s AND build = %s", key)
            conn.execute("DELETE FROM longqa_build_items WHERE library = %s AND build = %s", key)

"""The catalog in PostgreSQL, used whenever `LONGQA_POSTGRES_URI` is set with a Chroma server (the
deployment already runs PostgreSQL for threads). Chroma holds vectors only.

Tables (created idempotently, one replica at a time):
    longqa_libraries       name, version, stamp, manifest (JSON text), published_at
    longqa_library_pending library, doc_id: vectors an unpublished update added
    longqa_library_retired collection, library, retired_at: collections a publish replaced
    longqa_library_removed library, doc_id, removed_at: documents a publish removed (vectors kept a while)
    longqa_library_used    library, used_at: a library made for inline texts, when any replica last used it
    longqa_texts           doc_id (content hash), body (the document's JSON), touched_at
    longqa_text_refs       library, doc_id: a text's references (its count is its rows)
    longqa_chunkings       id (content hash, size, settings), doc_id, payload

- The update lock is a session advisory lock (`pg_advisory_lock`) on a connection of its own, held
  for the update: it goes when the holder's connection ends (the process died, the connection was
  terminated), with no lease record, renewal thread or clock. A holder that stops talking (frozen)
  loses its session after `lock_idle_s` (`idle_session_timeout`); the holder's `check()` between
  documents keeps a working session alive and fails on a dead one.
- Publishing is a compare-and-set on the version (`UPDATE ... WHERE version = expected`), made on the
  lock's own connection, in one transaction with the pending marks cleared, the text references
  replaced and the retired collections and removed documents recorded: a stale writer gets 0 rows (or a dead connection)
  and publishes nothing.
- Texts and chunkings are rows keyed by content hash, in PostgreSQL rather than Chroma records:
  bounded (one row per text, no 16 KiB or 300-record caps), transactional with the references, and
  never indexed by Chroma's full-text index. A text is forgotten only when no published library
  references it (`longqa_text_refs`, a foreign key: the database itself refuses to drop a referenced one).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from ...documents import Document
from .catalog import Held, LocalCatalog, LockLost, Publication, StalePublish

log = logging.getLogger(__name__)
T = TypeVar("T")

SCHEMA_LOCK = 0x6C6F6E6763  # pg_advisory_lock key: one replica creates the tables at a time
LOCK_IDLE_S = 300.0  # a lock holder silent this long (frozen) loses its session, and so the lock
POOL_SIZE = 4

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS longqa_libraries (
        name TEXT PRIMARY KEY, version BIGINT NOT NULL, stamp TEXT NOT NULL, manifest TEXT NOT NULL,
        published_at TIMESTAMPTZ NOT NULL DEFAULT now())""",
    """CREATE TABLE IF NOT EXISTS longqa_library_pending (
        library TEXT NOT NULL, doc_id TEXT NOT NULL, PRIMARY KEY (library, doc_id))""",
    """CREATE TABLE IF NOT EXISTS longqa_library_retired (
        collection TEXT PRIMARY KEY, library TEXT NOT NULL, retired_at TIMESTAMPTZ NOT NULL DEFAULT now())""",
    """CREATE TABLE IF NOT EXISTS longqa_library_removed (
        library TEXT NOT NULL, doc_id TEXT NOT NULL, removed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (library, doc_id))""",
    """CREATE TABLE IF NOT EXISTS longqa_library_used (
        library TEXT PRIMARY KEY, used_at TIMESTAMPTZ NOT NULL DEFAULT now())""",
    """CREATE TABLE IF NOT EXISTS longqa_texts (
        doc_id TEXT PRIMARY KEY, body TEXT NOT NULL, touched_at TIMESTAMPTZ NOT NULL DEFAULT now())""",
    """CREATE TABLE IF NOT EXISTS longqa_text_refs (
        library TEXT NOT NULL, doc_id TEXT NOT NULL REFERENCES longqa_texts (doc_id),
        PRIMARY KEY (library, doc_id))""",
    "CREATE INDEX IF NOT EXISTS longqa_text_refs_doc ON longqa_text_refs (doc_id)",
    """CREATE TABLE IF NOT EXISTS longqa_chunkings (
        id TEXT PRIMARY KEY, doc_id TEXT NOT NULL, payload TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS longqa_chunkings_doc ON longqa_chunkings (doc_id)",
]


LIBRARY_TABLES = ("longqa_library_pending", "longqa_text_refs", "longqa_library_removed", "longqa_library_used")


class CatalogUnavailable(RuntimeError):
    """The catalog's PostgreSQL cannot be reached (a wrong URI, a server down): the message says which setting."""


def lock_key(name: str) -> int:
    """A library's advisory lock key: 64 bits of a hash of its name."""
    return int.from_bytes(hashlib.sha256(f"longqa-library:{name}".encode()).digest()[:8], "big", signed=True)


class Session:
    """The update lock's `Held`: the connection whose session holds the advisory lock."""

    def __init__(self, conn: psycopg.Connection, name: str):
        self.conn, self.name = conn, name
        self.pid: int = conn.info.backend_pid  # the server process of the session (pg_terminate_backend)

    def check(self) -> None:
        """One round trip on the lock's connection: a dead session is `LockLost`."""
        try:
            self.conn.execute("SELECT 1")
        except psycopg.Error as e:
            raise LockLost(f"library {self.name}: the update lock's session ended ({type(e).__name__})") from e


def _session(held: Held) -> Session:
    if not isinstance(held, Session):
        raise TypeError(f"a PostgreSQL catalog writes under its own lock, not {type(held).__name__}")
    return held


class PostgresCatalog(LocalCatalog):
    """Manifests, locks, pending marks, retired collections, texts and chunkings in PostgreSQL;
    this host's `libraries/<name>/` holds only caches (BM25 versions)."""

    shared = True

    def __init__(self, home: Path, uri: str, lock_idle_s: float = LOCK_IDLE_S):
        super().__init__(home)
        self.uri, self.lock_idle_s = uri, lock_idle_s
        self.connect_timeout_s = 30.0  # how long a first connection may take (a restarting server)
        self._pool: ConnectionPool | None = None
        self._pool_lock = threading.Lock()

    @property
    def pool(self) -> ConnectionPool:
        """Connections for reads and unlocked writes, opened (and the tables made) on first use."""
        with self._pool_lock:
            if self._pool is None:
                pool = ConnectionPool(
                    self.uri,
                    min_size=1,
                    max_size=POOL_SIZE,
                    kwargs={"autocommit": True, "prepare_threshold": None},
                    open=False,
                    name="longqa-catalog",
                )
                try:
                    pool.open(wait=True, timeout=self.connect_timeout_s)
                except PoolTimeout as e:
                    pool.close()
                    raise CatalogUnavailable(
                        f"the catalog's PostgreSQL (LONGQA_POSTGRES_URI) did not answer within "
                        f"{self.connect_timeout_s:g} s: {e}"
                    ) from None
                with pool.connection() as conn:
                    conn.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
                    try:
                        for statement in SCHEMA:
                            conn.execute(statement)
                    finally:
                        conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))
                self._pool = pool
            return self._pool

    def close(self) -> None:
        """Close the pool (tests; a server's shutdown)."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def _run(self, work: Callable[[psycopg.Connection], T]) -> T:
        """`work` on a pooled connection. A connection the server dropped (a restart) fails once and
        leaves the pool; the work is tried again on the next (reads, and writes that are idempotent).
        Cheaper than checking every connection as it leaves the pool: one round trip less per call."""
        for attempt in range(POOL_SIZE + 1):
            try:
                with self.pool.connection() as conn:
                    return work(conn)
            except psycopg.OperationalError:
                if attempt == POOL_SIZE:
                    raise
                log.info("catalog: a PostgreSQL connection was dropped; trying another")
        raise AssertionError("unreachable")

    def _one(self, query: str, params: tuple) -> tuple | None:
        return self._run(lambda conn: conn.execute(query, params).fetchone())

    def _all(self, query: str, params: tuple) -> list[tuple]:
        return self._run(lambda conn: conn.execute(query, params).fetchall())

    def _write(self, query: str, params: tuple) -> None:
        self._run(lambda conn: conn.execute(query, params))

    # -- manifests ------------------------------------------------------------------------------
    def stamp(self, name: str) -> str | None:
        """The published version's stamp (new per publish)."""
        row = self._one("SELECT stamp FROM longqa_libraries WHERE name = %s", (name,))
        return row[0] if row else None

    def read(self, name: str) -> str | None:
        """The published manifest's JSON."""
        row = self._one("SELECT manifest FROM longqa_libraries WHERE name = %s", (name,))
        return row[0] if row else None

    def publish(self, held: Held, name: str, new: Publication) -> object:
        """The compare-and-set, with its pending marks, references, retired collections and removed
        documents, in one transaction on the lock's connection."""
        conn, stamp = _session(held).conn, f"{new.version}-{uuid.uuid4().hex[:12]}"
        try:
            with conn.transaction():
                if new.expected == 0:
                    cur = conn.execute(
                        "INSERT INTO longqa_libraries (name, version, stamp, manifest) VALUES (%s, %s, %s, %s) "
                        "ON CONFLICT (name) DO NOTHING",
                        (name, new.version, stamp, new.manifest_json),
                    )
                else:
                    cur = conn.execute(
                        "UPDATE longqa_libraries SET version = %s, stamp = %s, manifest = %s, published_at = now() "
                        "WHERE name = %s AND version = %s",
                        (new.version, stamp, new.manifest_json, name, new.expected),
                    )
                if cur.rowcount != 1:
                    raise StalePublish(f"library {name}: version {new.expected} is no longer the published one")
                conn.execute("DELETE FROM longqa_library_pending WHERE library = %s", (name,))
                conn.execute("DELETE FROM longqa_text_refs WHERE library = %s", (name,))
                conn.execute(
                    "INSERT INTO longqa_text_refs (library, doc_id) SELECT %s, unnest(%s::text[])", (name, new.members)
                )
                conn.execute(
                    "INSERT INTO longqa_library_retired (collection, library) SELECT unnest(%s::text[]), %s "
                    "ON CONFLICT (collection) DO NOTHING",
                    (new.retired, name),
                )
                conn.execute(
                    "INSERT INTO longqa_library_removed (library, doc_id) SELECT %s, unnest(%s::text[]) "
                    "ON CONFLICT (library, doc_id) DO UPDATE SET removed_at = now()",
                    (name, list(new.removed)),
                )
        except psycopg.errors.ForeignKeyViolation as e:
            raise StalePublish(f"library {name}: a member's text was forgotten meanwhile; update again") from e
        except psycopg.OperationalError as e:
            raise LockLost(f"library {name}: the update lock's session ended before publishing") from e
        return stamp

    def pending(self, name: str) -> set[str]:
        """The pending marks' doc ids."""
        return {r[0] for r in self._all("SELECT doc_id FROM longqa_library_pending WHERE library = %s", (name,))}

    def mark_pending(self, held: Held, name: str, doc_ids: set[str]) -> None:
        """Insert the marks, on the lock's connection (a writer that lost it marks nothing)."""
        self._locked(
            held,
            "INSERT INTO longqa_library_pending (library, doc_id) SELECT %s, unnest(%s::text[]) ON CONFLICT DO NOTHING",
            (name, sorted(doc_ids)),
        )

    def clear_pending(self, held: Held, name: str) -> None:
        """Delete the marks, on the lock's connection."""
        self._locked(held, "DELETE FROM longqa_library_pending WHERE library = %s", (name,))

    def retired(self, name: str, older_than_s: float) -> list[str]:
        """Collections retired at least `older_than_s` ago by the database's clock (one clock)."""
        rows = self._all(
            "SELECT collection FROM longqa_library_retired WHERE library = %s "
            "AND retired_at <= now() - make_interval(secs => %s) ORDER BY collection",
            (name, float(older_than_s)),
        )
        return [r[0] for r in rows]

    def forget_retired(self, held: Held, name: str, collections: list[str]) -> None:
        """Delete their rows, on the lock's connection."""
        self._locked(held, "DELETE FROM longqa_library_retired WHERE collection = ANY(%s)", (collections,))

    def removed(self, name: str, older_than_s: float) -> list[str]:
        """Documents removed at least `older_than_s` ago by the database's clock."""
        rows = self._all(
            "SELECT doc_id FROM longqa_library_removed WHERE library = %s "
            "AND removed_at <= now() - make_interval(secs => %s) ORDER BY doc_id",
            (name, float(older_than_s)),
        )
        return [r[0] for r in rows]

    def forget_removed(self, held: Held, name: str, doc_ids: list[str]) -> None:
        """Delete their rows, on the lock's connection."""
        self._locked(
            held, "DELETE FROM longqa_library_removed WHERE library = %s AND doc_id = ANY(%s)", (name, doc_ids)
        )

    def touch(self, name: str) -> None:
        """One upsert of the library's last use, seen by every replica (no lock)."""
        self._write(
            "INSERT INTO longqa_library_used (library) VALUES (%s) ON CONFLICT (library) DO UPDATE SET used_at = now()",
            (name,),
        )

    def unused(self, older_than_s: float) -> list[str]:
        """Libraries whose last use, on any replica, is at least `older_than_s` old (the database's clock)."""
        rows = self._all(
            "SELECT library FROM longqa_library_used WHERE used_at <= now() - make_interval(secs => %s) "
            "ORDER BY library",
            (float(older_than_s),),
        )
        return [r[0] for r in rows]

    def drop(self, held: Held, name: str) -> None:
        """The library's rows go in one transaction (its references with them), then this host's caches."""
        conn = _session(held).conn
        try:
            with conn.transaction():
                for table in LIBRARY_TABLES:
                    conn.execute(f"DELETE FROM {table} WHERE library = %s", (name,))
                conn.execute("DELETE FROM longqa_libraries WHERE name = %s", (name,))
        except psycopg.OperationalError as e:
            raise LockLost(f"library {name}: the update lock's session ended") from e
        super().drop(held, name)

    def references(self, doc_id: str) -> int:
        """How many published libraries hold this text."""
        row = self._one("SELECT count(*) FROM longqa_text_refs WHERE doc_id = %s", (doc_id,))
        return int(row[0]) if row else 0

    def _locked(self, held: Held, query: str, params: tuple) -> None:
        try:
            _session(held).conn.execute(query, params)
        except psycopg.OperationalError as e:
            raise LockLost(f"the update lock's session ended ({type(e).__name__})") from e

    # -- the update lock ------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[Held]:
        """A session advisory lock on a connection of its own, closed (and so released) after the block."""
        self.pool  # noqa: B018 - the tables exist before the first write under the lock
        conn = psycopg.connect(
            self.uri, autocommit=True, prepare_threshold=None, application_name=f"longqa-lock:{name}"[:63]
        )
        try:
            if self.lock_idle_s > 0:
                conn.execute(
                    "SELECT set_config('idle_session_timeout', %s, false)", (f"{int(self.lock_idle_s * 1000)}",)
                )
            key = lock_key(name)
            if not conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                log.info("library %s: waiting for the update of another replica", name)
                conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            yield Session(conn, name)
        finally:
            with contextlib.suppress(psycopg.Error):
                conn.close()  # the session ends: the lock goes with it

    # -- documents and their chunkings ----------------------------------------------------------
    def has_documents(self, doc_ids: list[str]) -> set[str]:
        """Which of these texts are held."""
        return {r[0] for r in self._all("SELECT doc_id FROM longqa_texts WHERE doc_id = ANY(%s)", (doc_ids,))}

    def put_document(self, document: Document) -> None:
        """Insert the text (or mark it as used now)."""
        self._write(
            "INSERT INTO longqa_texts (doc_id, body) VALUES (%s, %s) "
            "ON CONFLICT (doc_id) DO UPDATE SET touched_at = now()",
            (document.doc_id, document.model_dump_json()),
        )

    def get_document(self, doc_id: str) -> Document | None:
        """The text's row, as a Document."""
        row = self._one("SELECT body FROM longqa_texts WHERE doc_id = %s", (doc_id,))
        return Document.model_validate_json(row[0]) if row else None

    def forget_documents(self, doc_ids: list[str], older_than_s: float = 0.0) -> None:
        """Delete those of these texts (and their chunkings) that no library references and that
        were not put for `older_than_s` seconds; a referenced text stays."""
        if not doc_ids:
            return

        def forget(conn: psycopg.Connection) -> None:
            with conn.transaction():
                gone = conn.execute(
                    "DELETE FROM longqa_texts t WHERE doc_id = ANY(%s) "
                    "AND touched_at <= now() - make_interval(secs => %s) "
                    "AND NOT EXISTS (SELECT 1 FROM longqa_text_refs r WHERE r.doc_id = t.doc_id) RETURNING doc_id",
                    (doc_ids, float(older_than_s)),
                ).fetchall()
                if gone:
                    conn.execute("DELETE FROM longqa_chunkings WHERE doc_id = ANY(%s)", ([r[0] for r in gone],))

        self._run(forget)

    def has_chunks(self, ids: list[str]) -> set[str]:
        """Which of these chunkings are held."""
        return {r[0] for r in self._all("SELECT id FROM longqa_chunkings WHERE id = ANY(%s)", (ids,))} if ids else set()

    def put_chunks(self, record_id: str, payload: dict) -> None:
        """Insert a chunking (the same id is the same chunking: a second insert is a no-op)."""
        self._write(
            "INSERT INTO longqa_chunkings (id, doc_id, payload) VALUES (%s, %s, %s) ON CONFLICT (id) DO NOTHING",
            (record_id, payload["doc_id"], json.dumps(payload)),
        )

    def get_chunks(self, record_id: str) -> dict | None:
        """A chunking's payload."""
        row = self._one("SELECT payload FROM longqa_chunkings WHERE id = %s", (record_id,))
        return json.loads(row[0]) if row else None

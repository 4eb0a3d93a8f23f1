"""Where conversation threads persist when longqa owns the checkpointer (the CLI's `--thread`,
`longqa serve`, an agent or application embedding the graph): PostgreSQL when `postgres_uri`
(LONGQA_POSTGRES_URI) is set, so a thread started on one replica continues on another; otherwise
SQLite under the index home (one host). `langgraph dev` and LangGraph deployments keep threads in
their own persistence and never call this.

PostgreSQL connections come from a pool opened with what `langgraph-checkpoint-postgres` needs:
autocommit (its migrations create indexes concurrently), no prepared statements (a pooler in
transaction mode, such as PgBouncer, hands the next statement to another server connection) and
dict rows; each connection is checked as it leaves the pool, so a database restart costs a
reconnect rather than a failed turn. Two replicas starting at once would both run the migrations: an advisory lock lets
one run them while the other waits.

A thread belongs to the tenant whose request started it (`claim_thread`, a table beside the
checkpoints: the first claim wins atomically, `INSERT ... ON CONFLICT DO NOTHING`), so a server can
answer another tenant's request for it as if it did not exist."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from longqa.contracts.settings import Settings

MIGRATION_LOCK = 0x6C6F6E67  # pg_advisory_lock key ("long"): one replica migrates at a time
POOL_SIZE = 8

_lock = threading.Lock()
_savers: dict[str, BaseCheckpointSaver] = {}


def thread_checkpointer(settings: Settings) -> BaseCheckpointSaver:
    """The process's checkpointer for `settings` (one per database: a pool is shared by every run)."""
    key = settings.postgres_uri or str(Path(settings.home) / "threads.sqlite")
    with _lock:
        if key not in _savers:
            _savers[key] = _postgres(settings.postgres_uri) if settings.postgres_uri else _sqlite(Path(settings.home))
        return _savers[key]


OWNERS_TABLE = "longqa_thread_owners"
_OWNERS_DDL = f"CREATE TABLE IF NOT EXISTS {OWNERS_TABLE} (thread_id TEXT PRIMARY KEY, tenant TEXT NOT NULL)"


def claim_thread(saver: BaseCheckpointSaver, thread_id: str, tenant: str) -> str:
    """The tenant that owns `thread_id`: `tenant` when it is new (claimed now) or already its."""
    pool: Any = getattr(saver, "conn", None)
    if isinstance(pool, sqlite3.Connection):  # SqliteSaver: one connection, its lock (PostgresSaver has a lock too)
        with saver.lock:  # type: ignore[attr-defined]
            pool.execute(f"INSERT INTO {OWNERS_TABLE} VALUES (?, ?) ON CONFLICT DO NOTHING", (thread_id, tenant))
            pool.commit()
            row = pool.execute(f"SELECT tenant FROM {OWNERS_TABLE} WHERE thread_id = ?", (thread_id,)).fetchone()
        return row[0]
    with pool.connection() as conn:
        conn.execute(f"INSERT INTO {OWNERS_TABLE} VALUES (%s, %s) ON CONFLICT DO NOTHING", (thread_id, tenant))
        row = conn.execute(f"SELECT tenant FROM {OWNERS_TABLE} WHERE thread_id = %s", (thread_id,)).fetchone()
    return row["tenant"]


def close_checkpointers() -> None:
    """Close the pools and connections opened here (a server's shutdown; tests)."""
    with _lock:
        for saver in _savers.values():
            conn: Any = getattr(saver, "conn", None)
            if conn is not None:
                conn.close()
        _savers.clear()


def _sqlite(home: Path) -> BaseCheckpointSaver:
    from langgraph.checkpoint.sqlite import SqliteSaver

    home.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(home / "threads.sqlite"), check_same_thread=False)
    conn.execute(_OWNERS_DDL)
    conn.commit()
    return SqliteSaver(conn)


def _postgres(uri: str) -> BaseCheckpointSaver:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    kwargs = {"autocommit": True, "prepare_threshold": None, "row_factory": dict_row}
    pool = ConnectionPool(
        uri,
        min_size=1,
        max_size=POOL_SIZE,
        kwargs=kwargs,
        check=ConnectionPool.check_connection,  # a connection the server dropped (a restart) is replaced
        open=False,
        name="longqa-threads",
    )
    pool.open(wait=True, timeout=30)
    saver = PostgresSaver(pool)  # type: ignore[arg-type]
    with pool.connection() as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        try:
            saver.setup()
            conn.execute(_OWNERS_DDL)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    return saver

"""Which catalog a store uses (catalog.py's `Catalog`): PostgreSQL, the Chroma server's records or
this host's files, by the index settings. Above the three implementations, which build on catalog.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .catalog import Catalog, LocalCatalog

if TYPE_CHECKING:
    from ..config import IndexSettings


def make_catalog(settings: IndexSettings, client_of: Callable[[], object]) -> Catalog:
    """The catalog a store uses: PostgreSQL with a Chroma server and `postgres_uri`, the Chroma
    server's records without PostgreSQL, else this host's files."""
    if settings.chroma_host and settings.postgres_uri:
        from .catalog_postgres import PostgresCatalog

        return PostgresCatalog(settings.home, settings.postgres_uri)
    if settings.chroma_host:
        from .catalog_chroma import SharedCatalog

        return SharedCatalog(settings.home, client_of)
    return LocalCatalog(settings.home)

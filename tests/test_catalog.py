"""The catalog's interface without servers: every implementation is a `Catalog`, the files catalog's
publish is a compare-and-set too, its retired collections wait out their grace period, and which
catalog a store gets follows its settings (tests/test_catalog_postgres.py: PostgreSQL for real)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from longqa.retrieval.index.config import IndexSettings
from longqa.retrieval.index.library.catalog import (
    Catalog,
    LocalCatalog,
    Publication,
    StalePublish,
    TextCatalog,
)
from longqa.retrieval.index.library.catalog_choice import make_catalog
from longqa.retrieval.index.library.catalog_chroma import SharedCatalog
from longqa.retrieval.index.library.catalog_postgres import PostgresCatalog, lock_key


def test_every_catalog_implements_the_protocol(tmp_path: Path) -> None:
    local = LocalCatalog(tmp_path)
    shared = SharedCatalog(tmp_path, lambda: None)
    postgres = PostgresCatalog(tmp_path, "postgresql://nobody@127.0.0.1:1/none")  # connects on first use only
    for catalog in (local, shared, postgres):
        assert isinstance(catalog, Catalog)
    assert not local.shared and shared.shared and postgres.shared
    for method in ("has_documents", "put_document", "get_document", "forget_documents", "get_chunks"):
        assert all(callable(getattr(c, method, None)) for c in (shared, postgres)), method
    assert TextCatalog.__doc__ and all(getattr(Catalog, m).__doc__ for m in ("stamp", "read", "lock", "publish"))


def test_the_store_gets_postgres_only_with_a_chroma_server_and_a_uri(tmp_path: Path) -> None:
    uri = "postgresql://nobody@127.0.0.1:1/none"
    chose = lambda **kw: type(make_catalog(IndexSettings(home=tmp_path, **kw), lambda: None))  # noqa: E731
    assert chose() is LocalCatalog
    assert chose(postgres_uri=uri) is LocalCatalog  # one host, no server: files (the URI holds threads)
    assert chose(chroma_host="127.0.0.1") is SharedCatalog
    assert chose(chroma_host="127.0.0.1", postgres_uri=uri) is PostgresCatalog
    assert "nobody" not in repr(IndexSettings(home=tmp_path, postgres_uri=uri))  # it may hold a password


def test_the_files_catalog_publishes_only_over_the_version_it_started_from(tmp_path: Path) -> None:
    catalog = LocalCatalog(tmp_path)
    with catalog.lock("lib") as held:
        catalog.mark_pending(held, "lib", {"d1"})
        catalog.publish(held, "lib", Publication(json.dumps({"version": 1}), 1, 0, ["d1"], []))
        assert catalog.pending("lib") == set(), "the publish cleared the pending marks"
        with pytest.raises(StalePublish):
            catalog.publish(held, "lib", Publication(json.dumps({"version": 1, "stale": True}), 1, 0, ["d1"], []))
        catalog.publish(held, "lib", Publication(json.dumps({"version": 2}), 2, 1, ["d1"], ["old-collection"]))
    assert json.loads(catalog.read("lib") or "{}") == {"version": 2}
    assert catalog.retired("lib", 0.0) == ["old-collection"]
    assert catalog.retired("lib", 3600.0) == [], "retired moments ago: kept for the grace period"
    with catalog.lock("lib") as held:
        catalog.forget_retired(held, "lib", ["old-collection"])
    assert catalog.retired("lib", 0.0) == []


def test_the_files_catalog_dates_removed_documents_and_last_uses(tmp_path: Path) -> None:
    catalog = LocalCatalog(tmp_path)
    with catalog.lock("lib") as held:
        catalog.publish(held, "lib", Publication(json.dumps({"version": 1}), 1, 0, ["d1", "d2"], []))
        catalog.publish(held, "lib", Publication(json.dumps({"version": 2}), 2, 1, ["d1"], [], ["d2"]))
    assert catalog.removed("lib", 0.0) == ["d2"] and catalog.retired("lib", 0.0) == []
    assert catalog.removed("lib", 3600.0) == [], "removed moments ago: its vectors kept for the grace period"
    with catalog.lock("lib") as held:
        catalog.forget_removed(held, "lib", ["d2"])
    assert catalog.removed("lib", 0.0) == []
    catalog.touch("inline-x")
    assert catalog.unused(0.0) == ["inline-x"] and catalog.unused(3600.0) == []


def test_lock_keys_are_stable_and_distinct() -> None:
    assert lock_key("reports") == lock_key("reports") != lock_key("reports2")
    assert -(2**63) <= lock_key("x" * 128) < 2**63


def test_an_unreachable_postgres_is_a_clear_error_naming_the_setting(tmp_path: Path) -> None:
    from longqa.retrieval.index.library.catalog_postgres import CatalogUnavailable
    from tests.servers import free_port

    catalog = PostgresCatalog(tmp_path, f"postgresql://nobody@127.0.0.1:{free_port()}/none")
    catalog.connect_timeout_s = 1.0
    with pytest.raises(CatalogUnavailable, match="LONGQA_POSTGRES_URI"):
        catalog.stamp("lib")

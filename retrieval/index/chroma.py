"""The Chroma client a store talks to."""

from __future__ import annotations

from .config import IndexSettings


def make_chroma_client(settings: IndexSettings):
    """An HttpClient when a Chroma server is configured, else an embedded PersistentClient.
    Telemetry is always off."""
    import chromadb
    from chromadb.config import Settings

    chroma_settings = Settings(anonymized_telemetry=False)
    if settings.chroma_host:
        return chromadb.HttpClient(host=settings.chroma_host, port=settings.chroma_port, settings=chroma_settings)
    path = settings.home / "chroma"
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path), settings=chroma_settings)

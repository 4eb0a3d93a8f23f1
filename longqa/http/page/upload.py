"""`POST /page/api/upload`: one file sent from the page into a collection, within the server's
limits and the key's grants (README, "The page"). The body is JSON, `{collection, name, content}`
with the file's bytes in base64, read like every POST body of `longqa serve` (its size limit,
its time limit, `application/json` only). The key must hold `index` on the collection, as an /index
run with `texts` must; no documents grant is needed, since no file of the server is read. The file
is read by the same bounded readers as an indexed file (each format's reader, its time, memory and
size ceilings) from a private temporary copy, and joins the collection as `upload/<name>`: the
other members stay, and uploading a changed file of the same name replaces it."""

from __future__ import annotations

import base64
import binascii
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from longqa.contracts.settings import Settings
from longqa.http.access import Caller, Denied
from longqa.retrieval.index.library.manifest import valid_name

MAX_NAME = 120
_UNSAFE = re.compile(r"[^\w. -]+")  # \w: letters and digits of any script, and "_"


class Upload(BaseModel):
    """One uploaded file: the collection it joins, its name as the page gave it, its bytes in base64."""

    collection: str = Field(min_length=1, max_length=128)
    name: str = Field(min_length=1, max_length=1000)
    content: str = Field(description="the file's bytes, base64")


class UploadRefused(ValueError):
    """An upload that cannot join the collection: the reason, shown beside the file (HTTP 422)."""


def safe_name(name: str) -> str:
    """The file's own name (no folder), with only letters, digits, '.', '_', '-' and spaces kept."""
    # fullwidth and other compatibility forms read as their plain letters first (seen: "ｓｅｃｒｅｔ．md" became "_md")
    base = unicodedata.normalize("NFKC", name).replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _UNSAFE.sub("_", base).strip(" .")[:MAX_NAME]
    if not cleaned:
        raise UploadRefused(f"{name[:60]!r} is not a file name")
    return cleaned


def parse_upload(raw: bytes) -> Upload:
    """The body as an Upload, or UploadRefused naming what is wrong."""
    try:
        return Upload.model_validate_json(raw)
    except ValidationError as e:
        first = e.errors()[0]
        raise UploadRefused(f"{'.'.join(map(str, first['loc'])) or 'body'}: {first['msg']}") from None


def _bytes(upload: Upload) -> bytes:
    try:
        return base64.b64decode(upload.content, validate=True)
    except (binascii.Error, ValueError):
        raise UploadRefused("content: not base64") from None


def upload(caller: Caller, settings: Settings, request: Upload) -> dict[str, Any]:
    """Read the file with the bounded readers and add it to the collection (a new version)."""
    from longqa.retrieval import DocumentError
    from longqa.retrieval.index.library.manifest import Member
    from longqa.retrieval.read.bounded import reader_for
    from longqa.services.stores import library_for, store_for

    if not caller.can("index"):
        raise Denied(403, f"this key may not index (its grants: {', '.join(sorted(caller.grants))})")
    if not valid_name(request.collection) or not caller.on_collection(request.collection):
        raise Denied(403, f"this key may not index on collection {request.collection[:60]!r}")
    name, data = safe_name(request.name), _bytes(request)
    store = store_for(settings)
    with tempfile.TemporaryDirectory(prefix="longqa-upload-") as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        try:
            document = reader_for(settings.read_limits()).load(path, store.settings.max_words)
        except DocumentError as e:
            raise UploadRefused(f"{name}: {e.reason}") from None
    source = f"upload/{name}"
    document = document.model_copy(update={"source": source})
    library = library_for(store, request.collection)
    member = Member(f"upload:{name}", source, lambda: document)
    update = library.update([member], [settings.primary_granularity], remove_missing=False)
    return {
        "collection": request.collection,
        "source": source,
        "version": library.manifest().version,
        "changes": {"added": update.added, "changed": update.changed, "unchanged": update.unchanged},
        "skipped": [f"{s.path}: {s.reason}" for s in update.skipped],
    }

"""The page's HTTP side (longqa/http/page/api.py, page_data.py, page_stream.py) in process, with two
tenants' keys: the headers that keep the page's scripts its own, the grants every read checks (a
passage of a collection the key may not read, a thread of another tenant, a file outside the key's
documents), and the streamed /ask and /index refusing what /ask and /index refuse. Evidence only (no
model configured); the browser tier is tests/test_page_browser.py."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from longqa.http.keys import add_key

PAGE = Path(__file__).resolve().parents[1] / "longqa" / "http" / "page"


@dataclass
class Page:
    client: TestClient
    acme: dict[str, str]
    globex: dict[str, str]
    reader: dict[str, str]  # acme, ask only
    doc_id: str  # acme-lib's document
    root: Path


def _events(response) -> list[dict]:
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    from longqa.contracts.settings import Settings
    from longqa.http.keys import KeyStore
    from longqa.http.serve import build_app
    from longqa.runner.threads import close_checkpointers

    base = tmp_path_factory.mktemp("page-api")
    root = base / "root"
    (root / "acme").mkdir(parents=True)
    (root / "globex").mkdir()
    (root / "acme" / "fleet.md").write_text("# Fleet\n\nThe dredger Marrowdeep was built by Holloway & Venn.\n")
    (root / "globex" / "vault.md").write_text("# Vault\n\nThe Globex ledger is kept in vault seven.\n")
    keys = base / "keys.json"
    bearer = lambda key: {"Authorization": f"Bearer {key}"}  # noqa: E731
    acme = bearer(add_key(keys, "acme", ["ask", "index"], ["acme-lib"], ["acme"])[1])
    globex = bearer(add_key(keys, "globex", ["ask", "index"], ["globex-lib"], ["globex"])[1])
    reader = bearer(add_key(keys, "acme", ["ask"], ["acme-lib"])[1])
    deployment = Settings(home=base / "home", documents_root=root, keys_file=keys, model=None)
    with TestClient(build_app(KeyStore(keys), deployment=deployment), base_url="http://127.0.0.1:8123") as client:
        for key, name, folder in ((acme, "acme-lib", "acme"), (globex, "globex-lib", "globex")):
            done = _events(
                client.post("/page/api/index", json={"collection": name, "documents": [folder]}, headers=key)
            )
            assert done[-1]["type"] == "result" and done[-1]["result"]["error"] is None, done
            if name == "acme-lib":
                doc_id = done[-1]["result"]["doc_ids"][0]
        asked = {"question": "Where is the ledger?", "collection": "globex-lib", "thread_id": "globex-t"}
        assert client.post("/ask", json=asked, headers=globex).status_code == 200
        yield Page(client, acme, globex, reader, doc_id, root)
    close_checkpointers()


def test_the_page_and_its_files_carry_a_strict_policy(page: Page) -> None:
    for path in ("/", "/page/app.js", "/page/app.css"):
        r = page.client.get(path)
        assert r.status_code == 200
        csp = r.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe" not in csp
        assert "object-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert r.headers["x-content-type-options"] == "nosniff"
    assert page.client.get("/page/app.js").headers["content-type"].startswith("text/javascript")
    assert page.client.get("/page/__init__.py").status_code == 404  # only the three files are served
    assert page.client.get("/page/../serve.py").status_code == 404


def test_the_page_builds_its_dom_from_text_nodes_only() -> None:
    script = (PAGE / "app.js").read_text("utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", ".href"):
        assert sink not in script, sink
    html = (PAGE / "index.html").read_text("utf-8")
    assert re.findall(r"<script[^>]*>", html) == ['<script src="/page/app.js" defer>']  # no inline script
    assert "style=" not in html and "<style" not in html  # no inline style either
    assert not re.search(r"\son[a-z]+=", html)  # no inline handler
    assert "sessionStorage" in script and "localStorage" not in script  # the key is kept for the tab only


def test_whoami_names_only_the_keys_own_collections(page: Page) -> None:
    assert page.client.get("/page/api/whoami").status_code == 401
    who = page.client.get("/page/api/whoami", headers=page.acme).json()
    assert who["tenant"] == "acme" and [c["name"] for c in who["collections"]] == ["acme-lib"]
    assert who["collections"][0]["documents"] == ["acme/fleet.md"] and who["may_index_files"]
    assert not page.client.get("/page/api/whoami", headers=page.reader).json()["may_index_files"]


def test_a_passage_is_shown_only_from_a_collection_the_key_may_read(page: Page) -> None:
    q = {"collection": "acme-lib", "doc_id": page.doc_id, "start": 9, "end": 60}
    shown = page.client.get("/page/api/passage", params=q, headers=page.reader).json()
    assert "Marrowdeep" in shown["span"] and shown["source"] == "acme/fleet.md" and shown["section"] == "Fleet"
    r = page.client.get("/page/api/passage", params=q, headers=page.globex)
    assert r.status_code == 403 and "Marrowdeep" not in r.text
    r = page.client.get("/page/api/passage", params={**q, "collection": "globex-lib"}, headers=page.globex)
    assert r.status_code == 404 and "Marrowdeep" not in r.text  # acme's document is not globex-lib's
    bad = page.client.get("/page/api/passage", params={**q, "start": "-5"}, headers=page.acme)
    assert bad.status_code == 422 and "start" in bad.json()["error"]
    far = page.client.get("/page/api/passage", params={**q, "start": 10**9, "end": 10**9 + 5}, headers=page.acme)
    assert far.status_code == 200 and far.json()["span"] == ""


def test_threads_are_the_tenants_own(page: Page) -> None:
    mine = page.client.get("/page/api/threads", headers=page.globex).json()["threads"]
    assert [t["thread_id"] for t in mine] == ["globex-t"] and mine[0]["title"] == "Where is the ledger?"
    assert page.client.get("/page/api/threads", headers=page.acme).json()["threads"] == []
    assert page.client.get("/page/api/threads/globex-t", headers=page.acme).status_code == 404
    turns = page.client.get("/page/api/threads/globex-t", headers=page.globex).json()["turns"]
    assert turns[0]["question"] == "Where is the ledger?" and "vault" in turns[0]["answer"]


def test_files_are_those_the_key_may_index(page: Page) -> None:
    listed = page.client.get("/page/api/files", headers=page.acme).json()["files"]
    assert [f["path"] for f in listed] == ["acme/fleet.md"]
    assert page.client.get("/page/api/files", headers=page.reader).status_code == 403


def test_the_streamed_runs_refuse_what_ask_and_index_refuse(page: Page) -> None:
    body = {"question": "Where is the ledger?", "collection": "globex-lib"}
    r = page.client.post("/page/api/ask", json=body, headers=page.acme)
    assert r.status_code == 403 and "globex-lib" in r.json()["error"]
    r = page.client.post("/page/api/ask", json={**body, "thread_id": "globex-t"}, headers=page.globex)
    assert r.status_code == 200
    r = page.client.post(
        "/page/api/ask", json={**body, "collection": "acme-lib", "thread_id": "globex-t"}, headers=page.acme
    )
    assert r.status_code == 404  # another tenant's thread: not even its existence
    r = page.client.post("/page/api/index", json={"collection": "acme-lib", "documents": ["globex"]}, headers=page.acme)
    assert r.status_code == 403 and "globex" in r.json()["error"]
    r = page.client.post("/page/api/ask", content=b"question=x", headers={**page.acme, "Content-Type": "text/plain"})
    assert r.status_code == 415
    r = page.client.post("/page/api/ask", json={"question": "x", "context": {"home": "/etc"}}, headers=page.acme)
    assert r.status_code == 422
    r = page.client.post("/page/api/ask", json={"question": "x", "documents": {"a": 1}}, headers=page.acme)
    assert r.status_code == 422 and "documents" in r.json()["error"]  # strict types, as /ask (longqa/http/requests.py)


def test_a_streamed_question_shows_its_steps_then_the_result(page: Page) -> None:
    body = {"question": "Who built the dredger Marrowdeep?", "collection": "acme-lib"}
    events = _events(page.client.post("/page/api/ask", json=body, headers=page.acme))
    steps = [e["node"] for e in events if e["type"] == "step"]
    assert steps[0] == "prepare" and "analyze" in steps and "organize" in steps and steps[-1] == "respond"
    result = events[-1]["result"]
    assert events[-1]["type"] == "result" and result["status"] == "evidence-only" and result["answer"] is None
    assert any("Marrowdeep" in c["text"] for c in result["citations"])
    assert str(page.root) not in json.dumps(events)  # the server's paths never reach the page


def _upload(page: Page, key: dict[str, str], name: str, data: bytes, collection: str = "acme-lib"):
    body = {"collection": collection, "name": name, "content": base64.b64encode(data).decode()}
    return page.client.post("/page/api/upload", json=body, headers=key)


def test_an_upload_joins_the_collection_within_the_keys_grants(page: Page) -> None:
    r = _upload(page, page.acme, "../../etc/crew notes.txt", b"The tug Brisk Tern has a crew of five.\n")
    assert r.status_code == 200, r.text
    assert r.json()["source"] == "upload/crew notes.txt" and r.json()["changes"]["added"] == ["upload/crew notes.txt"]
    held = page.client.get("/page/api/whoami", headers=page.acme).json()["collections"][0]["documents"]
    assert held == ["acme/fleet.md", "upload/crew notes.txt"]  # the other members stay
    again = _upload(page, page.acme, "crew notes.txt", b"The tug Brisk Tern has a crew of six.\n")
    assert again.json()["changes"]["changed"] == ["upload/crew notes.txt"]  # the same name replaces it
    assert _upload(page, page.globex, "x.txt", b"globex text\n").status_code == 403  # not its collection
    assert _upload(page, page.reader, "x.txt", b"reader text\n").status_code == 403  # ask only
    bad = _upload(page, page.acme, "y.txt", b"")
    assert bad.status_code == 422 and "y.txt" in bad.json()["error"]  # the reader's reason
    r = page.client.post(
        "/page/api/upload", json={"collection": "acme-lib", "name": "z.txt", "content": "%%"}, headers=page.acme
    )
    assert r.status_code == 422 and "base64" in r.json()["error"]
    assert page.client.post("/page/api/upload", json={"name": "z.txt"}, headers=page.acme).status_code == 422


def test_the_streamed_runs_keep_the_inline_text_limits(page: Page) -> None:
    too_many = {"collection": "acme-lib", "texts": ["a few words"] * 257}
    r = page.client.post("/page/api/index", json=too_many, headers=page.acme)
    assert r.status_code == 422 and "max_inline_texts" in r.json()["error"]
    r = page.client.post("/page/api/ask", json={"question": "x", **too_many}, headers=page.acme)
    assert r.status_code == 422 and "max_inline_texts" in r.json()["error"]


def test_an_index_run_gives_its_job_slot_back_when_it_ends(page: Page) -> None:
    body = {"collection": "globex-lib", "documents": ["globex"]}
    for _ in range(3):  # one job per key at once (LONGQA_MAX_INDEX_JOBS=1): each run ended frees it
        r = page.client.post("/page/api/index", json=body, headers=page.globex)
        assert r.status_code == 200 and _events(r)[-1]["result"]["error"] is None, r.text


def test_a_passage_of_a_paged_document_says_its_pages(tmp_path: Path) -> None:
    from longqa.contracts.settings import Settings
    from longqa.http.access import LOCAL
    from longqa.http.page import data as page_data
    from longqa.retrieval.index.library.manifest import document_members
    from longqa.retrieval.read.loaders import document_from_text
    from longqa.services.stores import library_for, store_for

    settings = Settings(home=tmp_path / "home", model=None)
    pages = ["# Fleet\n\nThe tug Brisk Tern is moored at the pontoon.", "The dredger Marrowdeep works the fairway."]
    document = document_from_text("\n\n\f\n\n".join(pages), source="fleet.pdf")
    library_for(store_for(settings), "paged").update(document_members([document]), [settings.primary_granularity])
    start = document.text.index("The dredger")
    query = page_data.PassageQuery(collection="paged", doc_id=document.doc_id, start=start, end=start + 40)
    shown = page_data.passage(LOCAL, settings, query)
    assert (shown.page, shown.section, shown.ocr) == ("2", "Fleet", False) and shown.span.startswith("The dredger")
    across = page_data.passage(LOCAL, settings, query.model_copy(update={"start": 10}))
    assert across.page == "1-2"

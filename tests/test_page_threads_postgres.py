"""The page's thread list and turns (longqa/http/page/data.py) where threads live in PostgreSQL, as on
replicas (LONGQA_POSTGRES_URI): a real PostgreSQL (Debian's, tests/servers.py), the thread graph run
with the scripted model (an offline test model) over an inline text, two tenants."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from longqa.contracts.settings import Settings
from longqa.http.access import Caller, Denied
from tests.servers import postgres_server

pytestmark = pytest.mark.scale_out


def test_a_tenant_lists_and_opens_only_its_own_threads_in_postgres(tmp_path: Path) -> None:
    from longqa.graph.graph import build_graph
    from longqa.http.page import data as page_data
    from longqa.runner.threads import claim_thread, close_checkpointers, thread_checkpointer

    acme = Caller("acme", frozenset({"ask"}), frozenset({"*"}), ())
    globex = Caller("globex", frozenset({"ask"}), frozenset({"*"}), ())
    with postgres_server() as pg:
        settings = Settings(home=tmp_path / "home", postgres_uri=pg.uri, model="scripted")
        saver = thread_checkpointer(settings)
        try:
            graph = build_graph().compile(checkpointer=saver)
            assert claim_thread(saver, "acme-1", acme.thread_owner) == acme.thread_owner  # as /ask claims it
            text = "The dredger Marrowdeep was built by Holloway & Venn in 2009."
            for question in ("Who built the dredger Marrowdeep?", "And in which year?"):
                graph.invoke(
                    {"messages": [HumanMessage(question)], "texts": [text]},
                    config={"configurable": {"thread_id": "acme-1"}},
                    context=settings,
                )
            listed = page_data.threads(acme, saver)
            assert [(t["thread_id"], t["title"], t["turns"]) for t in listed] == [
                ("acme-1", "Who built the dredger Marrowdeep?", 2)
            ]
            assert page_data.threads(globex, saver) == []
            turns = page_data.thread_turns(acme, saver, "acme-1")["turns"]
            assert [t["question"] for t in turns] == ["Who built the dredger Marrowdeep?", "And in which year?"]
            with pytest.raises(Denied) as refused:
                page_data.thread_turns(globex, saver, "acme-1")
            assert refused.value.status == 404
        finally:
            close_checkpointers()

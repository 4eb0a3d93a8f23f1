"""What the warm server (longqa/warm/server.py) loads: before it listens, what every question needs
(`preload`); while it waits, one step at a time, what questions load lazily (`later_loads`). Never a
library's store: its children open those."""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Callable

from longqa.warm.worker import Runner

# imported after the server listens, one at a time between requests, beyond what the CLI imports: what
# a question loads lazily (measured with `python -X importtime` and sys.modules after a question in a
# forked child). A child forked before they are loaded imports what its question needs itself; the
# first question therefore need not wait for the model client (langchain_openai, ~0.8 s) it may not use.
LATER_MODULES = (
    "chromadb",
    "chromadb.config",
    "chromadb.api.client",
    "chromadb.api.rust",
    "chromadb.telemetry.product.posthog",
    "bm25s",
    "scipy.sparse",
    "langchain_core.tracers.context",
    "langchain_core.tracers.run_collector",
    "langchain_core.tracers.stdout",
    "langchain_openai",
)


def preload() -> Runner:
    """Import and build what every question needs before the server listens (never a library's store:
    the children open those, and see each library's changes as any long-running process does): the CLI
    and its parser, the compiled graph and the ONNX query encoder, which loads in a thread while the
    others import; return the CLI's `main` bound to that parser. The rest is `later_loads()`."""
    from longqa.retrieval.index.embed.embedder import preload_in_background

    loading = preload_in_background()
    from longqa.cli import commands
    from longqa.runner.ask import compiled_graph

    parser = commands.build_parser()
    compiled_graph()
    if loading is not None:  # a load that failed is left to the questions' own, which report it
        loading.join()  # before any fork: the encoder's one-thread session then starts no thread of its own
    return functools.partial(commands.main, parser=parser)  # each question parses in a forked copy of it


def later_loads() -> list[Callable[[], object]]:
    """What the server loads while it waits for questions, one step at a time (`Server.serve`)."""

    def load_counter() -> object:
        from longqa.retrieval.tokens import default_counter

        return default_counter()

    def load_analyzer() -> object:  # the trained analyzer and its check of the embedder (~20 ms a question)
        from longqa.analyzer.trained import default_analyzer

        analyzer, _ = default_analyzer()
        return analyzer.embedder if analyzer is not None and analyzer.uses_embedding else analyzer

    def load_countries() -> object:  # the grounding check's country names: countryinfo's data files (~70 ms)
        from longqa.llm.countries import country_forms

        return country_forms()

    def importer(name: str) -> Callable[[], object]:
        def load() -> object:
            with contextlib.suppress(ImportError):
                return importlib.import_module(name)
            return None

        return load

    return [importer(name) for name in LATER_MODULES] + [load_counter, load_analyzer, load_countries]

"""The graph's state: a small input face, a working state, and an output face.

Values are plain JSON-able dicts and lists (records typed as TypedDicts) so the state crosses
checkpointers, the LangGraph server and Studio unchanged; pydantic models (`Plan`, `Analysis`)
validate at the node boundaries. Lists written by parallel branches (retrieve per sub-question,
filter per chunk) or appended to by every LLM call carry reducers.

A thread keeps the caller's input face (`InputState`: the conversation and what it asked about);
every other field is one turn's work. `turn_start` derives the reset of those fields from the
schema itself, so a field added to the state is reset without being listed anywhere: the graph's
node wrapper applies it with the turn's first node (graph/node.py). A reduced list is replaced with
LangGraph's `Overwrite`, which streams as `{"value": [...], "type": "__overwrite__"}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, NotRequired, get_args, get_origin, get_type_hints

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite
from typing_extensions import TypedDict  # LangGraph publishes schemas from these on Python < 3.12

from longqa.retrieval import Chunk, Document, Passage, ScoredChunk

from .settings import Strategy


class Hit(TypedDict):
    """A retrieved chunk."""

    doc_id: str
    source: str
    index: int
    granularity: int
    start: int
    end: int
    paragraph_ids: list[int]
    n_tokens: int
    text: str
    score: float
    dense_score: float | None
    bm25_score: float | None
    query: str


class Evidence(TypedDict):
    """A passage shown to the model (merged/extended chunks), cited as `id` (E1, E2, ...)."""

    id: str
    doc_id: str
    source: str
    start: int
    end: int
    text: str
    score: float
    query: str
    page: NotRequired[str]  # the page(s) it is on in a paged document (PDF, TIFF): "3" or "3-4"
    ocr: NotRequired[bool]  # its text (on one of those pages) was read by OCR from a scan or photo
    section: NotRequired[str]  # the heading it lies under, "4.2 Results" (retrieval/search/sections.py)


class Shown(Evidence):
    """A passage, chunk or long-context span put in front of the model, and by which node: every
    model call that reads the documents says what it read (a step-wise hop's chunks included)."""

    reader: Literal[
        "analyze", "reason_step", "cot", "filter", "extract", "calculate", "generate", "ground", "long_context"
    ]


class Verdict(TypedDict):
    """A relevance judgement of one evidence passage (the CoT or per-chunk filter): keep it or not, and whether the
    model's reply could be parsed."""

    evidence_id: str
    keep: bool
    parsed: bool


class Grounding(TypedDict):
    """The grounding check of an answer (nodes/ground.py): is it supported by its cited passages?"""

    answer: str  # the answer checked (kept when the run declines it)
    verdict: Literal["supported", "unsupported", "unsure"]
    share: float  # of the answer's content words found in the cited passages
    # who decided: the words, the model asked where they were unsure, or the calculator's cited operands
    # or "subject": the question names what the documents never say, so no answer from them is about it;
    # "non-answer": the reply restates the question or copies a heading or a passage's label (llm/non_answer.py);
    # "absence": a "No" to whether a name the documents never say is in a set a passage lists whole
    # (llm/absent_member.py)
    method: Literal["lexical", "model", "computed", "subject", "non-answer", "absence"]
    missing: list[str]  # the answer's numbers and words the passages do not hold
    why: NotRequired[str]  # "non-answer": why the reply answers nothing (the generator is told it when asked again);
    # "absence": the list that leaves the name out


class Calculation(TypedDict):
    """The calculator's work (nodes/calculate.py): the model's expression, its value, the answer; or the compare
    node's (nodes/compare.py): the dates or the introductions that decided, and no value for a yes."""

    expression: str
    value: float | None
    answer: str


class Step(TypedDict):
    """One hop of the step-wise workflow: its query, the evidence the reasoner noted, and its next query or answer."""

    hop: int
    query: str
    evidence: str
    next_query: str | None
    answer: str | None


class LLMCall(TypedDict):
    """One attempt at a model call (llm/calls.py)."""

    node: str
    model: str
    input_tokens: int
    output_tokens: int
    seconds: float
    estimated: bool
    outcome: Literal["ok", "truncated", "timeout", "context_length", "error"]
    counted_tokens: int  # the prompt as our offline counter counts it (longqa.llm.budget.calibration)


class Usage(TypedDict):
    """The run's model usage summed over every attempt: calls, tokens, OkraLong's cost, seconds, and the question's
    input budget."""

    calls: int
    input_tokens: int
    output_tokens: int
    cost: int  # OkraLong's weighting: input + 4 x output
    estimated: bool
    seconds: float
    question_budget: int | None  # the input tokens the plan allowed all calls together (None: no limit)


def _extend(old: list | None, new: list | None) -> list:
    return [*(old or []), *(new or [])]


def _merge_hits(old: list[Hit] | None, new: list[Hit] | None) -> list[Hit]:
    """Parallel retrieves append; the same chunk found twice is kept once with its best score."""
    merged: dict[tuple[str, int, int], Hit] = {}
    for hit in [*(old or []), *(new or [])]:
        key = (hit["doc_id"], hit["granularity"], hit["index"])
        if key not in merged or hit["score"] > merged[key]["score"]:
            merged[key] = hit
    return list(merged.values())


Ledger = Annotated[list[LLMCall], _extend]


class InputState(TypedDict, total=False):
    """What a caller (CLI, SDK, Studio form, parent graph) passes in."""

    question: str
    documents: list[str]  # files and folders (under the configured documents root); folders are walked
    include: list[str]  # glob patterns a file found in a folder must match (any), e.g. "*.pdf"
    exclude: list[str]  # glob patterns a file found in a folder must not match, e.g. "drafts/**"
    texts: list[str]  # document texts passed inline
    collection: str  # a library indexed ahead (`longqa index --collection`); with documents: only those
    strategy: Strategy | None
    messages: Annotated[list[AnyMessage], add_messages]  # chat input: the last human message is the question


class OutputState(TypedDict, total=False):
    """What a caller reads.

    answer: the model's answer (None without a model, or when none was produced);
    status: answered, unanswerable, evidence-only (no model configured) or error;
    citations: the passages the answer cites (evidence-only: the passages retrieved);
    evidence: the passages the run gathered, E1, E2, ...; shown: what the model read, and which node;
    plan / analysis: the organizer's plan and the analyzer's characterisation, as data;
    route: the nodes in the order they ran; usage: one record per model call attempt; totals: their sum
    and cost (input + 4 x output) against the question budget; model: which model answered;
    calculation: the expression the model wrote and Python computed, for an arithmetic answer;
    grounding: the check of the answer against its cited passages (an unsupported one is declined);
    reasked: the generator's earlier reply, where it was asked again (a reply that answered nothing); `grounding`
    is the check of the reply that followed;
    error: why the run ended without an answer; skipped: files of a folder that could not be read;
    trace: one line per decision; long_context_selection: what the long-context reader chose to read;
    messages: the conversation, with this turn's answer and its sources as an AI message.
    """

    answer: str | None
    status: Literal["answered", "unanswerable", "evidence-only", "error"]
    citations: list[Evidence]
    evidence: list[Evidence]
    plan: dict[str, Any]
    analysis: dict[str, Any]
    shown: Annotated[list[Shown], _extend]  # what the model read: generate's passages, long_context's spans
    route: Annotated[list[str], _extend]  # nodes in the order they ran
    usage: Ledger
    totals: Usage
    model: str | None
    calculation: Calculation | None
    grounding: Grounding | None
    reasked: str | None
    error: str | None
    skipped: list[str]  # "file: reason" for each file found in a folder that could not be indexed
    long_context_selection: str | None  # the long-context reader's spans and how they were chosen (its trace line)
    trace: Annotated[list[str], _extend]
    messages: Annotated[list[AnyMessage], add_messages]


class State(InputState, OutputState, total=False):
    """The working state."""

    library: str  # the library searched (retrieval/index/library/library.py)
    doc_ids: list[str]  # the documents of it this run asks about
    sources: dict[str, str]  # doc_id -> the document's name as this run's caller gave it (citations use it)
    history: list[str]  # earlier turns of a chat thread, "User: ..." / "Assistant: ..."
    search_query: str  # the question, prefixed by the previous one in a thread (follow-ups)
    primary: list[Hit]
    unmentioned: list[str]  # the question's names the searched documents never say (retrieval/search/mentions.py)
    sub_questions: list[str]
    hits: Annotated[list[Hit], _merge_hits]
    steps: Annotated[list[Step], _extend]
    hops: int
    paragraphs: list[Evidence]
    global_info: str | None
    cot: str | None
    verdicts: Annotated[list[Verdict], _extend]
    draft: str | None  # answer proposed by the step-wise reasoner
    fallback: bool  # self_route's decision: read the long context
    deadline_at: float | None  # time.time() after which no model call starts or runs (Settings.deadline_s)
    failed: str | None  # the node that raised: the run goes to respond (graph/node.py)


class RetrieveTask(TypedDict):
    """What `retrieve` receives through `Send`: one query and how to search for it."""

    query: str
    library: str
    doc_ids: list[str]
    sources: dict[str, str]
    k: int
    budget: int | None  # evidence tokens to fill instead of k
    bridges: int  # LLM-free bridge searches seeded by the best chunks
    granularity: int
    weights: tuple[float, float]
    mode: Literal["hybrid", "dense", "bm25"]
    precision: list[str]  # the precision stage's ranking operators (retrieval/search/precision.py)
    precision_gap: float


class FilterTask(TypedDict):
    """What `filter` receives through `Send`: one chunk to judge against the CoT."""

    question: str
    cot: str
    evidence: Evidence
    deadline_at: float | None
    allowance: int | None  # the input tokens this judgement may cost (the question budget's share)


# -- conversions between the state's records and retrieval's types: one constructor each ------------


def hit_from(result: ScoredChunk, query: str, sources: Mapping[str, str] | None = None) -> Hit:
    """`sources` names each document as this run's caller gave it (the index keeps the first name)."""
    c = result.chunk
    return Hit(
        doc_id=c.doc_id,
        source=(sources or {}).get(c.doc_id, result.source),
        index=c.index,
        granularity=result.granularity,
        start=c.start,
        end=c.end,
        paragraph_ids=c.paragraph_ids,
        n_tokens=c.n_tokens,
        text=c.text,
        score=round(result.score, 6),
        dense_score=result.dense_score,
        bm25_score=result.bm25_score,
        query=query,
    )


def scored_from(hit: Hit) -> ScoredChunk:
    """The retrieval result a hit in the state was made from (the inverse of the hit's serialisation)."""
    chunk = Chunk(
        doc_id=hit["doc_id"],
        index=hit["index"],
        start=hit["start"],
        end=hit["end"],
        paragraph_ids=hit["paragraph_ids"],
        n_tokens=hit["n_tokens"],
        text=hit["text"],
    )
    return ScoredChunk(
        chunk=chunk,
        score=hit["score"],
        dense_score=hit["dense_score"],
        bm25_score=hit["bm25_score"],
        granularity=hit["granularity"],
        source=hit["source"],
    )


def evidence_from_passage(passage: Passage, id: str, hits: list[Hit]) -> Evidence:
    """A processed passage, scored and attributed by the best hit inside it."""
    inside = [
        h for h in hits if h["doc_id"] == passage.doc_id and passage.start <= h["start"] and h["end"] <= passage.end
    ]
    best = max(inside, key=lambda h: h["score"], default=None)
    return Evidence(
        id=id,
        doc_id=passage.doc_id,
        source=passage.source,
        start=passage.start,
        end=passage.end,
        text=passage.text,
        score=round(best["score"] if best else passage.score, 6),
        query=best["query"] if best else "",
    )


def evidence_from_chunk(result: ScoredChunk, id: str, query: str, sources: Mapping[str, str] | None = None) -> Evidence:
    """A retrieved chunk as evidence cited as `id`, named by the library's source for its document when given."""
    c = result.chunk
    return Evidence(
        id=id,
        doc_id=c.doc_id,
        source=(sources or {}).get(c.doc_id, result.source),
        start=c.start,
        end=c.end,
        text=c.text,
        score=round(result.score, 6),
        query=query,
    )


def evidence_from_document(document: Document, id: str, sources: Mapping[str, str] | None = None) -> Evidence:
    """A whole document as one evidence passage cited as `id` (score 1.0, no query)."""
    return Evidence(
        id=id,
        doc_id=document.doc_id,
        source=(sources or {}).get(document.doc_id, document.source),
        start=0,
        end=len(document.text),
        text=document.text,
        score=1.0,
        query="",
    )


def shown_by(reader: str, evidence: list[Evidence]) -> list[Shown]:
    """The passages one model call read, labelled with the node that read them."""
    return [Shown(**e, reader=reader) for e in evidence]


def shown_hits(reader: str, hits: list[Hit], label: str) -> list[Shown]:
    """Retrieved chunks one model call read (the analyzer's primary chunks, a hop's chunks), as
    passages labelled `label`.1, `label`.2, ..."""
    fields = [k for k in Evidence.__annotations__ if k != "id"]  # a hit holds every other required field of a passage
    return [
        Shown(id=f"{label}.{i}", **{k: h[k] for k in fields if k in h}, reader=reader) for i, h in enumerate(hits, 1)
    ]


def _empty(annotation: Any) -> Any:
    """A field's value at the start of a turn: an empty list or dict, 0, False, else None. A reduced
    list (Annotated with its reducer) is replaced, not extended."""
    if get_origin(annotation) is Annotated:
        return Overwrite(_empty(get_args(annotation)[0]))
    origin = get_origin(annotation) or annotation
    if origin in (list, dict):
        return origin()
    if annotation is bool:
        return False
    if annotation is int:
        return 0
    return None  # a str, a number, a record or an optional: not set this turn


def turn_start(schema: type | None = None, kept: type | None = None) -> dict[str, Any]:
    """The update that starts a turn clean: every field of `schema` (default: `State`) that is not
    the caller's input face (`kept`, default: `InputState`) set to its empty value."""
    schema = schema or State
    keep = set(get_type_hints(kept or InputState))
    hints = get_type_hints(schema, include_extras=True)
    return {name: _empty(hint) for name, hint in hints.items() if name not in keep}

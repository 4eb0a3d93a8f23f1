"""The research part of the run settings: the papers' knobs (OkraLong's k, granularities, fusion
weights and output caps, LongRAG's filter, the evidence budget and its bridges, the precision stage),
with the papers' values as defaults (OkraLong's appendix C.3) or those measured in bench/ and
evals/. A strategy preset sets most of them at once (contracts/plan.py); one is changed with
`--set name=value` or a run's context, within the deployment's ceilings on a server
(contracts/ceilings.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from .environment import env_choice


class ResearchSettings(BaseModel):
    """The papers' knobs: what the strategies' operators do and how much each may read and write."""

    # -- output caps of the papers' calls, sent as max_tokens (a reply cut at its cap is recorded, not used) --
    analyze_max_tokens: int = Field(ge=1, le=32768, default=160, description="most tokens the LLM analyzer may write")
    split_max_tokens: int = Field(
        ge=1, le=32768, default=256, description="most tokens the question splitter may write"
    )
    reason_max_tokens: int = Field(
        ge=1, le=32768, default=320, description="most tokens one step-wise reasoning step may write"
    )
    cot_max_tokens: int = Field(
        ge=1, le=32768, default=512, description="most tokens the CoT filter's chain of thought may write"
    )
    filter_max_tokens: int = Field(ge=1, le=32768, default=48, description="most tokens one filter verdict may write")
    extract_max_tokens: int = Field(
        ge=1, le=32768, default=512, description="most tokens the extractor's global information may write"
    )
    long_context_max_tokens: int = Field(
        ge=1,
        le=32768,
        default=384,
        description="most tokens the long-context reader may write (kept free in its window)",
    )

    # -- which operators run --
    analyzer: Literal["auto", "llm", "local"] = Field(
        default_factory=env_choice("LONGQA_ANALYZER", "local", ("auto", "llm", "local")),
        description=(
            "'local' = trained local analyzer, no LLM call (rule-based if its weights are unusable); "
            "'llm' = OkraLong table 8 prompt; 'auto' = llm when a model is set, else local"
        ),
    )
    stepwise_answer: Literal["reasoner", "passages", "both"] = Field(
        default="both",
        description="step-wise: the reasoner's answer is final, or the generator answers from the hops' passages "
        "(alone, or with the reasoner's notes: the default, measured with Qwen2.5-Coder-0.5B, evals/README.md)",
    )
    multi_bridge: Literal["stepwise", "bridges"] = Field(
        default="bridges",
        description="multi-bridge questions: one retrieval with bridge expansion (the LLM-free stand-in for the hops) "
        "read by the generator, the default: measured with Qwen2.5-Coder-0.5B, evals/README.md; or OkraLong's "
        "step-wise reasoner (one retrieval per hop)",
    )
    extractive_reading: Literal["once", "filtered"] = Field(
        default="once",
        description="extractive questions a model answers under an evidence budget: read once, the CoT filter's share "
        "of the question budget given to the evidence (contextual_budget, cut to the question budget), the default: "
        "measured with Qwen2.5-Coder-0.5B, evals/README.md; or 'filtered': OkraLong's factoid budget and LongRAG's "
        "CoT filter",
    )
    bridge_reading: Literal["once", "extracted"] = Field(
        default="extracted",
        description="multi-bridge questions answered by bridge expansion, with a model: 'extracted', the factoid "
        "budget beside LongRAG's extractor, which reads the evidence's source paragraphs again, the default: measured "
        "with Qwen2.5-Coder-0.5B and 1.5B (evals/README.md tenth round, issue #48); or 'once': no extractor, the "
        "evidence what one reading of the question budget affords (contextual_budget, cut to it). Without a model "
        "there is no extractor: the evidence is read once either way",
    )
    summary_reading: Literal["once", "extracted"] = Field(
        default="once",
        description="summarizing (descriptive) questions, with a model: 'once', no extractor, the evidence what one "
        "reading of the question budget affords (contextual_budget, cut to it), the default: measured with "
        "Qwen2.5-Coder-0.5B and 1.5B on 152 papers questions (evals/README.md twelfth round, issue #48); or "
        "'extracted': LongRAG's extractor beside the contextual budget, its call taking a share of the question budget",
    )
    calculator: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="the model writes arithmetic, Python computes it (auto: adaptive strategies' arithmetic)",
    )
    date_comparison: Literal["auto", "off"] = Field(
        default="auto",
        description="a question asking which of two options came first or last (born, founded, released...) is "
        "answered from the dates the passages write next to each option, not generated (auto: the adaptive "
        "strategies; undecided, the generator answers)",
    )
    shared_description: Literal["auto", "off"] = Field(
        default="auto",
        description="a yes/no question asking whether two named things both are one kind ('Were A and B both "
        "directors?') is answered 'yes' where the sentence introducing each in its own passage says every word of the "
        "kind, not generated (auto: the adaptive strategies; otherwise, the generator answers)",
    )
    grounding: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="an answer its cited passages do not support is a decline (auto: the adaptive strategies)",
    )
    reask: bool = Field(
        default=True,
        description="where answers are grounded, a reply that answers nothing (the question restated, a passage's "
        "label, a heading) is asked again once, told why, over the best chunks the tokens held for it afford "
        "(reask_tokens)",
    )
    reask_tokens: int = Field(
        ge=0,
        le=100_000,
        default=370,
        description="input tokens of the question budget kept back for asking again (reask): the generator's prompt "
        "with a question of about 20 tokens, the note quoting the earlier reply, and one 150-token chunk; the "
        "first reading's evidence is sized to the rest, and a budget too small for both keeps nothing back",
    )
    filter_mode: Literal["joint", "per-chunk"] = Field(
        default="joint",
        description="the CoT-guided filter of the adaptive strategies: 'joint' = one structured call writes the "
        "thought process and lists the passages to cite; 'per-chunk' = LongRAG's CoT call, then one call per passage",
    )

    # -- OkraLong numbers (appendix C.3) --
    primary_k: int = Field(ge=1, le=50, default=3, description="chunks in the primary retrieval")
    primary_granularity: int = Field(
        ge=8, le=4096, default=150, description="tokens per chunk in the primary retrieval"
    )
    factoid_k: int = Field(ge=1, le=50, default=5, description="chunks for factoid questions (extractive, arithmetic)")
    contextual_k: int = Field(ge=1, le=50, default=8, description="chunks for contextual questions (summarizing)")
    base_granularity: int = Field(ge=8, le=4096, default=150, description="chunk tokens when evidence is present")
    absent_factoid_granularity: int = Field(
        ge=8, le=4096, default=256, description="chunk tokens, evidence absent, factoid"
    )
    absent_contextual_granularity: int = Field(
        ge=8, le=4096, default=400, description="chunk tokens, evidence absent, contextual"
    )
    fusion_depth: int = Field(ge=1, le=200, default=20, description="each retriever's top-N before min-max fusion")
    preferred_weight: float = Field(
        ge=0, le=100, default=3.0, description="fusion weight of the preferred pattern (3:2)"
    )
    other_weight: float = Field(ge=0, le=100, default=2.0, description="fusion weight of the other pattern")
    sub_question_k: int = Field(ge=1, le=50, default=3, description="chunks per sub-question (split-aggregate)")
    hop_k: int = Field(ge=1, le=50, default=3, description="chunks per step-wise hop")
    max_hops: int = Field(ge=1, le=8, default=4, description="most step-wise reasoning rounds")
    max_sub_questions: int = Field(ge=1, le=10, default=5, description="most sub-questions kept from the splitter")
    extension_tokens: int = Field(ge=0, le=1024, default=64, description="context extension each side (arithmetic)")
    paragraph_cap_tokens: int = Field(
        ge=1, le=100_000, default=3000, description="token cap of source paragraphs for the extractor"
    )
    lc_top_chunks: int = Field(
        ge=1, le=2000, default=200, description="chunks kept when the document exceeds the window"
    )

    # -- what the reader is shown (measured in bench/evidence_budget.py; OkraLong's k via selection="k") --
    selection: Literal["budget", "k"] = Field(
        default="budget",
        description="'budget': the best chunks that fit evidence_budget tokens (adaptive strategies); "
        "'k': OkraLong's fixed k per question type (factoid_k, contextual_k, sub_question_k, hop_k)",
    )
    evidence_budget: int = Field(
        ge=1,
        le=100_000,
        default=900,
        description="evidence tokens for a factoid question (selection=budget; measured in bench/evidence_budget.py); "
        "a model's route may get less, to fit question_budget",
    )
    contextual_budget: int = Field(
        ge=1,
        le=100_000,
        default=2950,
        description="evidence tokens for a contextual (summarizing) question (selection=budget)",
    )
    bridge_seeds: int = Field(
        ge=0,
        le=10,
        default=2,
        description="LLM-free bridge expansion in direct retrieval: search again with the question plus each of "
        "this many best chunks (0 = off)",
    )
    bridge_per_seed: int = Field(ge=0, le=10, default=2, description="new chunks kept per bridge search")
    bridge_share: float = Field(
        ge=0, le=1, default=0.45, description="share of the evidence budget kept for bridge chunks (measured)"
    )
    bridge_query: Literal["names", "text"] = Field(
        default="names",
        description="a bridge search's query: the question plus the proper names its seed chunk says that the "
        "question does not ('names'), or plus the seed's whole text ('text'; measured in bench/README.md)",
    )
    heading_links: bool = Field(
        default=True,
        description="with a budget: chunks whose heading (a title line) the question names lead the ranking, and "
        "chunks whose heading a bridge seed names lead its bridge search (retrieval/search/links.py; measured)",
    )
    label_links: bool = Field(
        default=True,
        description="a question naming a label ('Listing 1', 'Figure 3', 'Table 2', 'Section 4.2') is answered from "
        "the chunk that defines it (its caption or numbered heading) first (retrieval/search/labels.py; measured)",
    )
    precision: list[Literal["boilerplate", "redundant", "gap", "sentences"]] = Field(
        default_factory=list,
        description="the precision stage after retrieval (retrieval/search/precision.py; a list, or comma-separated): "
        "'boilerplate' drops table-of-contents / page-number chunks, 'redundant' a chunk whose words a better one "
        "holds, 'gap' chunks scoring under precision_gap x the best, 'sentences' the sentences of a passage that "
        "share no word with its query (the budget-selected evidence, adaptive strategies). Off by default: none "
        "helped at the same words on the measured sets (bench/README.md)",
    )
    precision_gap: float = Field(
        ge=0, le=1, default=0.5, description="with 'gap' in precision: keep chunks scoring at least this x the best"
    )
    chunking: Literal["paragraph", "sentence"] = Field(
        default="paragraph",
        description="'paragraph': a paragraph that fits a chunk is never cut; 'sentence': sentences packed "
        "across paragraphs (the chunker before paragraph alignment)",
    )

    @field_validator("precision", mode="before")
    @classmethod
    def _listed(cls, value: object) -> object:
        """'a,b' (an environment variable, a --set) is the list ['a', 'b']; '' is none."""
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value


RESEARCH_FIELDS: tuple[str, ...] = tuple(ResearchSettings.model_fields)

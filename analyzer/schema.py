"""OkraLong's analysis (§3.2): question type, information pattern, evidence present."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

QuestionType = Literal["arithmetic", "extractive", "summarizing", "multi-source", "multi-bridge"]
InfoPattern = Literal["exact", "semantic", "same"]
QUESTION_TYPES: tuple[str, ...] = QuestionType.__args__
INFO_PATTERNS: tuple[str, ...] = InfoPattern.__args__


class Analysis(BaseModel):
    """The analyzer's judgement of a question: its type, the retrieval it suits, whether the primary retrieval holds
    the evidence, and which backend judged it."""

    question_type: QuestionType = "extractive"
    info_pattern: InfoPattern = "same"
    evidence: Literal["yes", "no"] = "no"
    backend: str = Field(default="default", description="llm | local-trained | local-rules | default")
    used_default: bool = Field(default=False, description="a judgement fell back to the safe default")
    note: str = ""


# what the analyzer records when the model's reply cannot be parsed (issue: extractive/same/no)
SAFE_DEFAULT = Analysis(
    question_type="extractive", info_pattern="same", evidence="no", backend="default", used_default=True
)

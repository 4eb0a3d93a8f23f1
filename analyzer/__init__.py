"""The analyzer's local backend: OkraLong's three judgements without an LLM call."""

from .rules import analyze_rules
from .schema import SAFE_DEFAULT, Analysis, InfoPattern, QuestionType

__all__ = ["SAFE_DEFAULT", "Analysis", "InfoPattern", "QuestionType", "analyze_rules"]

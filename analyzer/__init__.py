"""The analyzer's local backends: OkraLong's three judgements without an LLM call.

`analyze_local` is the default: the trained analyzer (analyzer/trained.py, weights in
analyzer/data/weights.npz, numpy inference), else the rule-based one (analyzer/rules.py).
"""

from .rules import analyze_rules
from .schema import SAFE_DEFAULT, Analysis, InfoPattern, QuestionType
from .trained import TrainedAnalyzer, WeightsError, analyze_local, default_analyzer

__all__ = [
    "SAFE_DEFAULT",
    "Analysis",
    "InfoPattern",
    "QuestionType",
    "TrainedAnalyzer",
    "WeightsError",
    "analyze_local",
    "analyze_rules",
    "default_analyzer",
]

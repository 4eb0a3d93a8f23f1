"""The analyzer's local backends: OkraLong's three judgements without an LLM call.

`analyze_local` is the default: the trained analyzer (analyzer/trained.py, weights in
analyzer/data/weights.npz, numpy inference), else the rule-based one (analyzer/rules.py). Names are
imported on first use (PEP 562): `from longqa.analyzer.schema import Analysis` loads no weights code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from longqa.retrieval import imported_when_used

if TYPE_CHECKING:
    from .rules import analyze_rules
    from .schema import SAFE_DEFAULT, Analysis, InfoPattern, QuestionType
    from .trained import TrainedAnalyzer, WeightsError, analyze_local, default_analyzer

_HOME = {
    "analyze_rules": "rules",
    "SAFE_DEFAULT": "schema",
    "Analysis": "schema",
    "InfoPattern": "schema",
    "QuestionType": "schema",
    "TrainedAnalyzer": "trained",
    "WeightsError": "trained",
    "analyze_local": "trained",
    "default_analyzer": "trained",
}

__all__ = [
    "Analysis",
    "InfoPattern",
    "QuestionType",
    "SAFE_DEFAULT",
    "TrainedAnalyzer",
    "WeightsError",
    "analyze_local",
    "analyze_rules",
    "default_analyzer",
]


__getattr__ = imported_when_used(__name__, _HOME)

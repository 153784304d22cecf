"""`groupmate eval`: an eval corpus through the real router, tools and a throwaway
database, against any OpenAI-compatible endpoint; judged by what was stored and
answered, never by what the model said."""

from groupmate.bot.eval.cases import Case, load_cases
from groupmate.bot.eval.judge import Outcome, Verdict
from groupmate.bot.eval.runner import CaseResult, EvalSettings, run_eval

__all__ = [
    "Case",
    "CaseResult",
    "EvalSettings",
    "Outcome",
    "Verdict",
    "load_cases",
    "run_eval",
]

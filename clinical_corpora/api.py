"""Every ``clincorp`` command from Python: the typed arguments each command is given, the typed result it returns.

Each function takes the same argument object the command line makes from its options and returns what the
command prints, typed; an error is raised as a :class:`ClincorpError` (which the command prints as one line).
``docs/python-api.md`` shows them at work."""

from clinical_corpora.builders.commands.baseline import BaselineArgs, BaselineRun, baseline
from clinical_corpora.builders.commands.diff import DiffArgs, diff
from clinical_corpora.builders.commands.rehydrate import RehydrateArgs, Rehydrated, check_sources, rehydrate
from clinical_corpora.builders.commands.release import ReleaseArgs, Released, release
from clinical_corpora.builders.commands.score import ScoreArgs, ScoreRun, check_record, score
from clinical_corpora.builders.commands.validate import ValidateArgs, Verdict, validate
from clinical_corpora.builders.commands.view import ViewArgs, view
from clinical_corpora.core.errors import ClincorpError

__all__ = [
    "BaselineArgs",
    "BaselineRun",
    "ClincorpError",
    "DiffArgs",
    "RehydrateArgs",
    "Rehydrated",
    "ReleaseArgs",
    "Released",
    "ScoreArgs",
    "ScoreRun",
    "ValidateArgs",
    "Verdict",
    "ViewArgs",
    "baseline",
    "check_record",
    "check_sources",
    "diff",
    "rehydrate",
    "release",
    "score",
    "validate",
    "view",
]

"""What one rehydration is asked to do: the typed request ``clincorp rehydrate`` hands ``run.rehydrate``, as
``release/request.ReleaseRequest`` is for a release."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from clinical_corpora.builders.contract.base import OnError


@dataclass(frozen=True)
class RehydrateRequest:
    """Restore the text-free release ``text_free`` into ``<out>/<corpus>/<corpus>-<version>``.

    ``sources`` are the user's copies (``--source NAME=PATH``; none: the embedded samples), read as UTF-8 unless
    ``encodings`` names their encoding (source → encoding, ``"*"``: every source; ``--source-encoding``). ``on_error``
    quarantine leaves out the records whose documents differ (a partial rehydration); ``re_anchor`` relocates
    their spans instead. ``documents`` (locator → text), when given, stand for the documents the sources hold
    (texts held elsewhere: a test's perturbed copies). ``on_stage`` hears one line per stage.
    """

    text_free: Path
    out: Path
    sources: Mapping[str, Path] = field(default_factory=dict)
    on_error: OnError = "fail"
    re_anchor: bool = False
    documents: Mapping[str, str] | None = None
    encodings: Mapping[str, str] = field(default_factory=dict)
    on_stage: Callable[[str], None] | None = None

    def stage(self, line: str) -> None:
        if self.on_stage is not None:
            self.on_stage(line)

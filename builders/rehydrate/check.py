"""``clincorp rehydrate --check``: before a long run, which source documents match the release, which differ
and how, and which are missing.

A document matches when its text has the sha256 the release recorded. One that differs is described with
what the release's anchors (``anchors.py``) say of the maintainer's text, never with its text: the lengths,
line ends, byte-order mark, trailing whitespace and Unicode form of both, whether the two normalised texts
are the same, and what ``--re-anchor`` will do with it: how many of the maintainer's characters the anchors confirm
in the copy (``DocumentMap``, the very map re-anchoring uses), and which runs they do not (a span touching one is
lost; any other is relocated, cut from the copy as it is).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clinical_corpora.builders.rehydrate.detect import encoding_problem
from clinical_corpora.builders.rehydrate.documents import given_sources, opened_text_free, read_documents
from clinical_corpora.builders.rehydrate.reanchor.relocate import document_map
from clinical_corpora.builders.rehydrate.request import RehydrateRequest
from clinical_corpora.builders.text_free.anchors import Anchor, read_anchors
from clinical_corpora.builders.text_free.normalise import EditCounts, normalise
from clinical_corpora.core.errors import EncodingError
from clinical_corpora.core.locators import split_locator
from clinical_corpora.core.release_records import ANCHORS_FILE
from clinical_corpora.core.text_encoding import UTF8

SHOWN_RANGES = 1000
"""The runs of the release's text not confirmed in a copy that ``--check --json`` lists, at most."""


@dataclass
class SourceCheck:
    """Per source: documents matching, differing (each with how) and missing."""

    corpus: str
    sources: dict[str, str | None]
    counts: dict[str, Counter[str]] = field(default_factory=dict)
    differing: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, str]] = field(default_factory=list)
    unreadable: dict[str, Any] | None = None
    """A copy that is not text in the encoding it was read in (:func:`detect.encoding_problem`): nothing else
    was compared."""
    encodings: dict[str, str] = field(default_factory=dict)
    """The sources read in an encoding other than UTF-8 (``--source-encoding``)."""

    @property
    def ok(self) -> bool:
        return not self.differing and not self.missing and self.unreadable is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "ok": self.ok,
            "sources": {
                name: {"path": self.sources.get(name), **{k: counts[k] for k in ("match", "differ", "missing")}}
                for name, counts in self.counts.items()
            },
            "differing": self.differing,
            "missing": self.missing,
            "unreadable": self.unreadable,
            "encodings": self.encodings,
        }


def check_sources(request: RehydrateRequest) -> SourceCheck:
    """Compare every document the release names with the sources' copy."""
    opened = opened_text_free(request.text_free)
    try:
        found = read_documents(opened, request)
    except EncodingError as error:
        sources = given_sources(opened.corpus, request.sources)
        report = SourceCheck(opened.corpus.name, {name: str(path) if path else None for name, path in sources.items()})
        report.unreadable = encoding_problem(error, sources)
        return report
    differing = [locator for locator in found.bad if locator in found.documents]  # held, with another text
    listed = opened.listed(ANCHORS_FILE)
    anchors = read_anchors(listed, differing) if listed is not None else {}
    report = SourceCheck(
        opened.corpus.name,
        {name: str(path) if path else None for name, path in found.sources.items()},
        encodings={name: encoding for name, encoding in found.encodings.items() if encoding != UTF8},
    )
    for locator in sorted(found.wanted):
        source = split_locator(locator)[0]
        counts = report.counts.setdefault(source, Counter())
        if locator not in found.documents:
            counts["missing"] += 1
            report.missing.append({"document": locator, "source": source})
        elif locator in found.bad:
            counts["differ"] += 1
            text = found.documents[locator]
            report.differing.append(_difference(locator, text, found.wanted[locator], anchors.get(locator)))
        else:
            counts["match"] += 1
    return report


def _difference(locator: str, text: str, sha256: str, anchor: Anchor | None) -> dict[str, Any]:
    """How the user's copy differs from the maintainer's text, as far as the anchors tell."""
    yours = normalise(text).counts
    entry: dict[str, Any] = {"document": locator, "your_characters": len(text), "yours": _kinds(yours)}
    if anchor is None:
        entry["how"] = ["its text differs; the release holds no anchors for it: it cannot be re-anchored"]
        return entry
    entry |= {"characters": anchor.characters, "theirs": _kinds(anchor.counts)}
    mapped = document_map(anchor, sha256, text)
    how = [f"length {anchor.characters} → {len(text)} characters"] if anchor.characters != len(text) else []
    how += [
        f"{what}: {_describe(anchor.counts, kind)} in the release's text, {_describe(yours, kind)} in yours"
        for what, kind in (
            ("line ends", "crlf"),
            ("byte-order mark", "bom"),
            ("trailing whitespace", "trailing_whitespace"),
            ("Unicode form", "unicode"),
        )
        if getattr(anchor.counts, kind) != getattr(yours, kind)
    ]
    usable = (mapped.to_user >= 0) | mapped.dropped
    entry["re_anchor"] = {
        "characters_confirmed": int(usable.sum()),
        "characters": anchor.characters,
        "unconfirmed": _ranges(~usable)[:SHOWN_RANGES],
    }
    if usable.all():
        how.append(
            f"{'the same text once normalised' if mapped.how == 'normalised' else 'every block found'}: all "
            f"{anchor.characters} characters of the release's text are confirmed in yours, so --re-anchor takes "
            "your copy's text and relocates every span into it, each cut from your copy as it is (a span crossing "
            "a line end that differs keeps your copy's)"
        )
    else:
        how.append(
            f"the text itself differs: {mapped.confirmed_blocks} of {mapped.blocks} blocks of the release's "
            f"text found in yours and {mapped.repaired_blocks} more found with one small edit, confirming "
            f"{int(usable.sum())} of its {anchor.characters} characters: --re-anchor relocates every span all of "
            "whose characters are confirmed and writes the others as null (lost, named in re-anchored.jsonl)"
        )
    entry["how"] = how
    return entry


def _ranges(mask: np.ndarray) -> list[list[int]]:
    """The ``[start, end)`` runs where ``mask`` holds."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [[int(start), int(end)] for start, end in zip(edges[::2], edges[1::2], strict=True)]


def _kinds(counts: EditCounts) -> dict[str, Any]:
    return {
        "bom": counts.bom,
        "crlf": counts.crlf,
        "trailing_whitespace": counts.trailing_whitespace,
        "unicode": counts.unicode,
    }


def _describe(counts: EditCounts, kind: str) -> str:
    value = getattr(counts, kind)
    if kind == "bom":
        return "present" if value else "absent"
    unit = {"crlf": "CRLF", "trailing_whitespace": "lines ending in spaces", "unicode": "non-NFC runs"}[kind]
    return f"{value} {unit}"

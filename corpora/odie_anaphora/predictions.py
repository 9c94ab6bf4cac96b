"""A system's identity chains drawn against the gold in ``clincorp view --predictions``: a CoNLL-2012 file as
``clincorp score coref RELEASE RESPONSE`` reads it (the release's ``conll2012`` export with the system's chains,
what ``clincorp baseline odie_anaphora`` writes), its documents matched to notes by name. A response mention on
a markable's tokens is that markable; one on tokens no markable covers is drawn over those tokens. Each markable
is labelled by the markable its chain links it to (``contract/display.linked_display``); a chain of one is no
link, on either side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinical_corpora.builders.contract.display import DocumentDisplay, Mark, RowReader, linked_display
from clinical_corpora.builders.exporters.conll2012 import mention_tokens
from clinical_corpora.builders.sources.conll2012 import ConllDocument, conll_doc_id, iter_conll2012
from clinical_corpora.core.errors import ClincorpError, SourceError
from clinical_corpora.corpora.odie_anaphora.display import note_display
from clinical_corpora.corpora.odie_anaphora.exports import NOTE_CHAINS


def prediction_displays(predictions: Path, rows: RowReader) -> dict[str, dict[str, DocumentDisplay]]:
    """The gold and the predicted chains of every released note (a note the file does not hold has no predicted
    chain); a document the release does not hold, or tokens other than the export's, is an error naming it."""
    if not predictions.is_file():
        raise SourceError(predictions, "expected a CoNLL-2012 file, as clincorp score coref reads for a response")
    responses = {document.normalised_id: document for document in iter_conll2012(predictions)}
    gold: dict[str, DocumentDisplay] = {}
    system: dict[str, DocumentDisplay] = {}
    for split, note in rows("odie_anaphora", None):
        chains = [chain["markable_ids"] for chain in note["chains"]]
        gold[note["id"]] = linked_display(note_display(split, note), _linked(chains), _where)
        shown = note_display(split, {**note, "chains": [], "pairs": []})
        response = responses.pop(conll_doc_id(note["id"]), None)
        predicted = _chains(note, response, shown, predictions) if response is not None else []
        system[note["id"]] = linked_display(shown, _linked(predicted), _where)
    if responses:
        unknown = ", ".join(sorted(responses)[:5])
        raise SourceError(predictions, f"holds {len(responses)} document(s) the release does not: {unknown}")
    return {"gold": gold, "system": system}


def _chains(note: dict[str, Any], response: ConllDocument, shown: DocumentDisplay, path: Path) -> list[list[str]]:
    """The response's chains as mark keys of ``shown``, marks added for mentions on no markable's tokens."""
    if note["text"] is None:
        raise ClincorpError(
            f"{path}: a text-free release holds no text to place CoNLL-2012 tokens on; rehydrate it first "
            "(clincorp rehydrate) and view the restored release"
        )
    placed, characters = mention_tokens(note, NOTE_CHAINS)
    if sum(len(sentence) for sentence in response.sentences) != len(characters):
        raise SourceError(
            path,
            f"document {response.doc_id} has {sum(map(len, response.sentences))} tokens, the release's conll2012 "
            f"export of note {note['id']} {len(characters)}: a response keeps the export's tokens",
        )
    markables: dict[tuple[int, int], list[str]] = {}
    for markable, tokens in placed.items():
        markables.setdefault((tokens.start, tokens.end), []).append(markable)
    chains = []
    for chain in response.chains:
        members: list[str] = []
        for start, end in sorted(chain):
            if (start, end) not in markables:
                key = f"tokens {start}-{end}"
                fragments = [(characters[start][0], characters[end - 1][1])]
                shown.passages[0].marks.append(Mark(key, "markable", "", fragments, [("not a markable", "yes")]))
                markables[start, end] = [key]
            members += markables[start, end]
        chains.append(members)
    return chains


def _linked(chains: list[list[str]]) -> list[list[str]]:
    """The chains that link (a chain of one, a singleton of the export, links nothing)."""
    return [chain for chain in chains if len(chain) > 1]


def _where(_: int, mark: Mark) -> str:
    start, end = mark.fragments[0]
    return f"[{start}, {end})"

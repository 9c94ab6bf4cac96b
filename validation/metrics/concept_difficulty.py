"""Concept difficulty features of the SNOMED CT Entity Linking paper (Davidson et al. 2025), per linked concept.

- ``mean_span_length``: mean length in characters of the spans linked to the concept;
- ``concept_entropy``: entropy of the bag of span strings linked to the concept;
- ``annotation_entropy``: entropy of the bag of concepts linked to any span whose string is one of
  the concept's span strings (how many plausible targets a linker has for the concept's spans);
- ``examples`` / ``training_examples``: spans linked to the concept in all splits / in the training split;
- ``notes``: notes (all splits) holding the concept;
- ``depth``: shortest is-a chain from the concept to the SNOMED CT root.

As in the paper, span strings and entropies are taken over all splits. Choices the paper leaves open:
span strings are compared case-folded with runs of whitespace collapsed, and entropies are in bits.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Mention:
    """One annotated span: the note, its split, the concept it is linked to and its text."""

    note_id: str
    split: str
    concept_id: int
    text: str


@dataclass(frozen=True)
class ConceptDifficulty:
    """The difficulty features of one concept."""

    concept_id: int
    mean_span_length: float
    concept_entropy: float
    annotation_entropy: float
    examples: int
    training_examples: int
    notes: int
    depth: int


def span_string(text: str) -> str:
    """The form under which span strings are compared: case-folded, whitespace runs collapsed."""
    return " ".join(text.casefold().split())


def entropy_bits(counts: Iterable[int]) -> float:
    """Shannon entropy (bits) of the multinomial estimated from ``counts``."""
    values = [count for count in counts if count > 0]
    total = sum(values)
    return -sum(count / total * math.log2(count / total) for count in values) + 0.0


def concept_difficulty(
    mentions: Iterable[Mention], depth: Mapping[int, int], training_split: str = "train"
) -> list[ConceptDifficulty]:
    """The features of every concept in ``mentions``, by concept id; ``depth`` maps concept → depth."""
    strings: dict[int, Counter[str]] = defaultdict(Counter)
    concepts_of_string: dict[str, Counter[int]] = defaultdict(Counter)
    lengths: Counter[int] = Counter()
    training: Counter[int] = Counter()
    notes: dict[int, set[str]] = defaultdict(set)
    for mention in mentions:
        string = span_string(mention.text)
        strings[mention.concept_id][string] += 1
        concepts_of_string[string][mention.concept_id] += 1
        lengths[mention.concept_id] += len(mention.text)
        training[mention.concept_id] += mention.split == training_split
        notes[mention.concept_id].add(mention.note_id)
    features = []
    for concept_id in sorted(strings):
        examples = sum(strings[concept_id].values())
        candidates: Counter[int] = Counter()
        for string in strings[concept_id]:
            candidates.update(concepts_of_string[string])
        features.append(
            ConceptDifficulty(
                concept_id=concept_id,
                mean_span_length=lengths[concept_id] / examples,
                concept_entropy=entropy_bits(strings[concept_id].values()),
                annotation_entropy=entropy_bits(candidates.values()),
                examples=examples,
                training_examples=training[concept_id],
                notes=len(notes[concept_id]),
                depth=depth[concept_id],
            )
        )
    return features


__all__ = ["ConceptDifficulty", "Mention", "concept_difficulty", "entropy_bits", "span_string"]

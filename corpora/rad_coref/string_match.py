"""The string-match coreference baseline (Datta et al. 2022, §5.1).

Two mentions of one document (a patient) are coreferent when their lower-cased strings are equal;
chains are the transitive closure of those links, i.e. the groups of mentions sharing a lower-cased
string. Mentions that match nothing are singleton chains.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

MentionId = Hashable


def string_match_chains(mentions: Iterable[tuple[MentionId, str]]) -> list[list[MentionId]]:
    """Chains of ``(mention id, mention text)`` pairs, in order of each chain's first mention."""
    chains: dict[str, list[MentionId]] = {}
    for mention_id, text in mentions:
        chains.setdefault(text.lower(), []).append(mention_id)
    return list(chains.values())

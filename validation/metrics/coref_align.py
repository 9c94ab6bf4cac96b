"""One document's key and response chains aligned as the CoNLL-2012 reference scorer (v8.01,
``lib/CorScorer.pm``) aligns them before scoring: mentions matched by identity, key chains checked, repeated
response mentions dropped or kept as the reference does (the choices are listed in ``coref.py``).

Our own code rather than a library: the reference's treatment of repeated and twinless mentions is what
matching it exactly needs, and no maintained package follows it.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Container, Hashable, Iterable, Mapping
from dataclasses import dataclass

Mention = Hashable
Chains = Iterable[Iterable[Mention]]
Documents = Mapping[str, Chains]


@dataclass(frozen=True)
class ChainOverlap:
    """One document's key and response reduced to what every metric needs.

    ``key_sizes[i]`` and ``response_sizes[j]`` are chain sizes; ``shared[(i, j)]`` is the number
    of mentions key chain ``i`` and response chain ``j`` have in common (only non-zero cells).
    ``repeated_response_mentions`` counts the response repeats that were dropped.
    """

    key_sizes: tuple[int, ...]
    response_sizes: tuple[int, ...]
    shared: Mapping[tuple[int, int], int]
    repeated_response_mentions: int = 0
    response_links: tuple[int, int] | None = None
    """Distinct (coreference, non-coreference) response mention pairs, when twinless repeats
    make them differ from what the chain sizes give; ``None`` otherwise."""


NO_CHAINS = ChainOverlap(key_sizes=(), response_sizes=(), shared={})


def _key_chains(key: Chains) -> list[list[Mention]]:
    chains: list[list[Mention]] = []
    seen: set[Mention] = set()
    for number, chain in enumerate(key):
        mentions = list(chain)
        if not mentions:
            raise ValueError(f"key chain {number} is empty")
        for mention in mentions:
            if mention in seen:
                raise ValueError(f"mention {mention!r} appears more than once in the key")
            seen.add(mention)
        chains.append(mentions)
    return chains


def _response_chains(
    response: Chains, key_mentions: Container[Mention], dedupe_twinless: bool
) -> tuple[list[list[Mention]], int, bool]:
    """Response chains without repeated key mentions, how many repeats were dropped, and
    whether twinless repeats were kept (see the module docstring)."""
    chains: list[list[Mention]] = []
    seen: set[Mention] = set()
    repeats = 0
    twinless_repeats = False
    for number, chain in enumerate(response):
        mentions = list(chain)
        if not mentions:
            raise ValueError(f"response chain {number} is empty")
        kept = []
        for mention in mentions:
            if mention not in seen:
                seen.add(mention)
                kept.append(mention)
            elif dedupe_twinless or mention in key_mentions:
                repeats += 1
            else:
                twinless_repeats = True
                kept.append(mention)
        if kept:
            chains.append(kept)
    return chains, repeats, twinless_repeats


def repeated_key_mentions(key: Chains, response: Chains) -> list[Mention]:
    """The key mentions the response holds more than once, one entry per repeat, in chain order: what the
    reference scorer reports as "Repeated mention in the response" (and :func:`align` drops)."""
    key_mentions = {mention for chain in key for mention in chain}
    seen: set[Mention] = set()
    repeats = []
    for chain in response:
        for mention in chain:
            if mention in seen:
                repeats.append(mention)
            elif mention in key_mentions:
                seen.add(mention)
    return repeats


def _distinct_links(chains: list[list[Mention]]) -> tuple[int, int]:
    """Distinct mention pairs within chains and across chains, as the reference's BLANC
    enumerates them (a mention in two chains pairs with itself across them)."""
    number = {mention: n for n, mention in enumerate(dict.fromkeys(m for chain in chains for m in chain))}
    ids = [[number[mention] for mention in chain] for chain in chains]
    coref = {(min(a, b), max(a, b)) for chain in ids for a, b in itertools.combinations(chain, 2)}
    non_coref = {
        (min(a, b), max(a, b)) for first, second in itertools.combinations(ids, 2) for a in first for b in second
    }
    return len(coref), len(non_coref)


def align(key: Chains, response: Chains, *, dedupe_twinless: bool = False) -> ChainOverlap:
    """Validate one document's chains (see the module docstring) and count shared mentions."""
    key_chains = _key_chains(key)
    key_chain_of = {mention: i for i, chain in enumerate(key_chains) for mention in chain}
    response_chains, repeats, twinless_repeats = _response_chains(response, key_chain_of, dedupe_twinless)
    shared: Counter[tuple[int, int]] = Counter()
    for j, chain in enumerate(response_chains):
        for mention in chain:
            i = key_chain_of.get(mention)
            if i is not None:
                shared[(i, j)] += 1
    return ChainOverlap(
        key_sizes=tuple(len(chain) for chain in key_chains),
        response_sizes=tuple(len(chain) for chain in response_chains),
        shared=dict(shared),
        repeated_response_mentions=repeats,
        response_links=_distinct_links(response_chains) if twinless_repeats else None,
    )

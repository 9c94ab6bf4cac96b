"""What a scorer hands ``clincorp score --record``: the metrics it computed and the config it scored."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Scored:
    """A scorer's metrics (name → value) on one config of its gold."""

    metrics: dict[str, float]
    config: str | None


def report_scores(args: argparse.Namespace, metrics: Mapping[str, float], config: str | None) -> None:
    """Keep the scores on the command's arguments, where ``clincorp score --record`` reads them."""
    args.scored = Scored({name: float(value) for name, value in metrics.items()}, config)


def scored_of(args: argparse.Namespace) -> Scored | None:
    """The scores a scorer reported, or None when it reported none."""
    scored = getattr(args, "scored", None)
    return scored if isinstance(scored, Scored) else None

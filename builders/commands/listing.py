"""``clincorp list``: every installed corpus, its version, access, sources and where to get them."""

from __future__ import annotations

import argparse
import sys

from clinical_corpora.builders.commands import arguments
from clinical_corpora.builders.plugins import all_corpora, load_plugins
from clinical_corpora.core.manifest import CorpusManifest
from clinical_corpora.core.registry import baselines, exporters, scorers


def configure(parser: argparse.ArgumentParser) -> None:
    """No arguments."""


def run(args: argparse.Namespace) -> int:
    """Every installed corpus; a plugin that fails to load is reported (exit status 1) and the others listed."""
    broken = load_plugins()
    for why in broken.values():
        print(f"error: {why}", file=sys.stderr)
    for manifest in all_corpora():
        access = "public" if manifest.access.public else "restricted"
        print(f"{manifest.name} {manifest.version} [{access}: {manifest.access.how.strip()}]")
        print(f"  {_sharing_line(manifest)}")
        for name, spec in manifest.sources.items():
            optional = "" if spec.required else " (optional)"
            default = f"default {spec.path}" if spec.path else "read only when given"
            print(f"  source {name}{optional}: {spec.kind}, {default}\n    {spec.description.strip()}")
        formats = sorted(name for name, owner in exporters.keys() if owner == manifest.name)
        if formats:
            print(f"  export formats: {', '.join(formats)}")
        named = [name for owner, name in baselines.keys() if owner == manifest.name]
        if named:
            print(f"  baselines: {', '.join(named)}")
    print("scorers: " + ", ".join(f"{name} ({scorers.get(name).help})" for name in sorted(scorers.keys())))
    return 1 if broken else 0


def _sharing_line(manifest: CorpusManifest) -> str:
    """Which variant of the corpus's releases may be passed on, under which licence."""
    licence = f"{manifest.license_name} <{manifest.license_link}>" if manifest.license_name else manifest.license
    text_free = f"its text-free variant (clincorp release {manifest.name} --text-free)"
    if manifest.full_release_shareable:
        return f"licence {licence}: the full release may be shared, and so may {text_free}"
    return f"licence {licence}: the full release may NOT be redistributed; share {text_free}"


COMMANDS = (
    arguments.Subcommand(
        "list", "corpora, versions, access and sources", arguments.plain_text(__doc__ or ""), configure, run
    ),
)

"""``clincorp view RELEASE --out DIR``: static HTML pages of a release, opened from ``file://`` with nothing
fetched (styles and scripts inline, pinned by a Content-Security-Policy), one per document plus an index.

Pages are written as the corpus's ``displays`` hook yields documents (a batch of rows at a time), into a staging
folder under ``--out`` that replaces the previous view only once every page is written. File names derive from
document ids (a safe slug and a hash), never from the raw id.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import itertools
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from clinical_corpora.builders.contract.display import DocumentDisplay
from clinical_corpora.builders.release.phi import view_findings
from clinical_corpora.builders.view.compare import compared_passages
from clinical_corpora.builders.view.overlay import overlay
from clinical_corpora.builders.view.pages import page_view
from clinical_corpora.builders.view.palette import palette_css
from clinical_corpora.builders.view.reading import Release, Violation
from clinical_corpora.core.errors import ClincorpError
from clinical_corpora.core.release_records import MAX_LISTED

ASSETS = Path(__file__).parent / "assets"
MARKER = ".clincorp-view"
"""A file marking a folder as a view, so a later run may replace its pages."""
DOCS = "docs"
INDEX = "index.html"


@dataclass
class Entry:
    """One document's row of the index."""

    id: str
    split: str
    labels: list[str]
    href: str
    counts: dict[str, int]
    violations: int

    @property
    def search(self) -> str:
        return " ".join([self.id, self.split, *self.labels]).lower()


@dataclass
class Outcome:
    index: Path
    documents: int


def write_view(release: Release, out: Path, progress: Callable[[int], None] = lambda _: None) -> Outcome:
    """Write the view of ``release`` into ``out`` (a new folder, an empty one or an earlier view)."""
    _check_out(out)
    staging = out / f".staging-{os.getpid()}-{secrets.token_hex(4)}"
    (staging / DOCS).mkdir(parents=True)
    try:
        env = environment()
        pages = PageWriter(env, release, staging / DOCS)
        pages.write_all(progress)
        _write_index(env.get_template("index.html.j2"), _shared(release), pages, staging / INDEX)
        _check_phi(release, staging)
        _publish(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Outcome(out / INDEX, len(pages.entries))


def _check_phi(release: Release, staging: Path) -> None:
    """Refuse pages holding what the release's PHI gate would refuse (a full release's note text left out: the
    templates mark it ``data-licensed``), naming each finding's page, element, line, category and hash."""
    findings = view_findings(staging, release.folder, release.phi)
    if findings:
        listed = "; ".join(f"{f.place()}: {f.category} (sha256 {f.hash}…)" for f in findings[:MAX_LISTED])
        raise ClincorpError(
            f"the view's pages hold {len(findings)} findings of the PHI gate and were not written: {listed} "
            "(their text is not shown: look at the release in the enclave)"
        )


def _check_out(out: Path) -> None:
    existing = next((folder for folder in (out, *out.parents) if folder.exists()), None)
    if existing is not None and not existing.is_dir():
        raise ClincorpError(f"{existing} is a file, not a folder: give --out a folder to write the view into")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise ClincorpError(f"{out} holds files that are not a clincorp view: give --out a new or empty folder")


def _publish(staging: Path, out: Path) -> None:
    """Replace the previous view's pages with the staged ones."""
    shutil.rmtree(out / DOCS, ignore_errors=True)
    (staging / DOCS).rename(out / DOCS)
    (staging / INDEX).replace(out / INDEX)
    (out / MARKER).write_text("pages written by clincorp view; the next run replaces them\n", encoding="utf-8")


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(ASSETS),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["inline_markdown"] = inline_markdown
    return env


def inline_markdown(text: str) -> jinja2.utils.markupsafe.Markup:
    """A card text's inline code and bold as HTML, the text escaped first."""
    html = str(jinja2.utils.markupsafe.escape(text))
    html = re.sub(r"`([^`]+)`", r"<code>\1</code>", html)
    return jinja2.utils.markupsafe.Markup(re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", html))


@functools.cache
def _asset(name: str) -> str:
    """A file the package ships with the viewer (read once per process)."""
    return (ASSETS / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return f"'sha256-{base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()}'"


def _shared(release: Release, colours: int = 0) -> dict[str, Any]:
    """What every page's frame shows: the release, and the inline style its policy allows by hash (with the
    ``colours`` classes of the palette the page uses)."""
    css = _asset("view.css") + palette_css(colours)
    return {"release": release, "css": jinja2.utils.markupsafe.Markup(css), "style_hash": _csp_hash(css)}


def _script(name: str) -> dict[str, Any]:
    script = _asset(name)
    return {"script": jinja2.utils.markupsafe.Markup(script), "script_hash": _csp_hash(script)}


def page_name(document_id: str, taken: set[str]) -> str:
    """A file name for a document: a slug of its id (letters, digits, ``-``, ``_``) and a hash of the whole id,
    numbered on when two ids give the same name."""
    slug = re.sub(r"[^A-Za-z0-9_]+", "-", document_id).strip("-")[:60] or "document"
    name = f"{slug}-{hashlib.sha256(document_id.encode()).hexdigest()[:10]}"
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = f"{name}-{number}"
    taken.add(candidate)
    return f"{candidate}.html"


class PageWriter:
    """Renders a release's document pages and writes them into a folder, keeping what the index needs."""

    def __init__(self, env: jinja2.Environment, release: Release, folder: Path) -> None:
        self.template = env.get_template("page.html.j2")
        self.context = _script("page.js")
        self.release = release
        self.folder = folder
        self.entries: list[Entry] = []
        self.links: dict[tuple[str, str], str] = {}
        """The page of each record a violation names."""
        self.by_record: dict[tuple[str, str], list[Violation]] = {}
        for violation in release.violations:
            self.by_record.setdefault((violation.config, violation.record), []).append(violation)

    def write_all(self, progress: Callable[[int], None]) -> None:
        """Write a page per document as the documents come (one held back, to link it to the next)."""
        taken: set[str] = set()
        held: tuple[DocumentDisplay, str] | None = None
        for doc in itertools.chain(_documents(self.release), [None]):
            name = page_name(doc.id, taken) if doc is not None else None
            if held is not None:
                previous = self.entries[-1].href.removeprefix(f"{DOCS}/") if self.entries else None
                html, entry = self.render(held[0], held[1], previous, name)
                (self.folder / held[1]).write_text(html, encoding="utf-8")
                self.entries.append(entry)
                self.links.update((record, entry.href) for record in held[0].records if record in self.by_record)
                progress(len(self.entries))
            held = (doc, name) if doc is not None and name is not None else None

    def render(self, doc: DocumentDisplay, name: str, previous: str | None, following: str | None) -> tuple[str, Entry]:
        """A document's page (linked to the pages before and after it) and its index entry."""
        violations = [v for record in doc.records for v in self.by_record.get(record, [])]
        view = page_view(doc)
        annotators = self.release.annotators
        annotated = {annotator: docs[doc.id] for annotator, docs in annotators.items() if doc.id in docs}
        compared = overlay(doc, annotated) if len(annotated) > 1 else None
        if compared is not None:
            view.counts["annotator disagreements"] = compared.disagreements
        html = self.template.render(
            **self.context,
            **_shared(self.release, view.colours),
            doc=doc,
            marks=view.marks,
            passages=view.passages,
            group_sections=view.group_sections,
            legend=view.legend,
            overlay=compared,
            compared_passages=compared_passages(doc, annotated) if compared is not None else [],
            violations=violations,
            previous=previous,
            next=following,
        )
        return html, Entry(doc.id, doc.split, doc.labels, f"{DOCS}/{name}", view.counts, len(violations))


def _documents(release: Release) -> Iterator[DocumentDisplay]:
    """The corpus's displays of the release; a row lacking what the installed corpus expects is an error."""
    try:
        yield from release.builder.displays(release.rows())
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ClincorpError(
            f"{release.folder}: a row does not hold what the installed {release.corpus} corpus shows "
            f"({type(error).__name__}: {error}); is the release from another version of the corpus?"
        ) from None


def _write_index(template: jinja2.Template, shared: dict[str, Any], pages: PageWriter, path: Path) -> None:
    entries, release = pages.entries, pages.release
    count_names = list(dict.fromkeys(name for entry in entries for name in entry.counts))
    html = template.render(
        **shared,
        **_script("index.js"),
        entries=entries,
        count_names=count_names,
        splits=sorted({entry.split for entry in entries}),
        labels=sorted({label for entry in entries for label in entry.labels}),
        violations=[(v, pages.links.get((v.config, v.record))) for v in release.violations],
    )
    path.write_text(html, encoding="utf-8")

"""The files of a new corpus plugin (``clincorp new-corpus``): a working BRAT corpus of three invented notes.

The skeleton is what docs/developing.md describes: a package registering its corpus when imported, named in the
``clinical_corpora.plugins`` entry-point group of its pyproject.toml; corpus.yaml; the sample in brat's own
standoff format; and a test that releases, text-free releases, validates and views the sample. In the ``python``
format it also holds record models whose note text is ``LicensedText`` (so the text-free release keeps none of
it) and a builder reading the BRAT folder, naming each note's source document (text-free releases and
rehydration) and drawing it for ``clincorp view``; in the ``brat`` format, none: corpus.yaml names the generic
BRAT builder and declares the entity types, a relation type and an attribute, which the sample uses.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

from clinical_corpora.builders.sources.brat.annotations import Attribute, BratDocument, Relation, TextBound
from clinical_corpora.builders.sources.brat.standoff import write_brat

SAMPLE_NOTES = (
    ("train", "note1", "Patient reports chest pain since Monday.\nECG ordered; aspirin given.\n"),
    ("train", "note2", "History of asthma.\nSpirometry today. Continue albuterol inhaler.\n"),
    ("test", "note3", "Presents with fever and cough.\nChest X-ray pending; started amoxicillin.\n"),
)
"""(split, note, text): invented notes, no patient's."""
SAMPLE_ENTITIES = {
    "note1": (("problem", "chest pain"), ("test", "ECG"), ("treatment", "aspirin")),
    "note2": (("problem", "asthma"), ("test", "Spirometry"), ("treatment", "albuterol inhaler")),
    "note3": (("problem", "fever"), ("problem", "cough"), ("test", "Chest X-ray"), ("treatment", "amoxicillin")),
}
SAMPLE_STATUS = {
    "note1": {"ECG": "ordered", "aspirin": "given"},
    "note2": {"Spirometry": "ordered", "albuterol inhaler": "continued"},
    "note3": {"Chest X-ray": "pending", "amoxicillin": "started"},
}
"""The brat format's attribute: the status of a note's tests and treatments."""
SAMPLE_TREATS = {
    "note1": ("aspirin", "chest pain"),
    "note2": ("albuterol inhaler", "asthma"),
    "note3": ("amoxicillin", "fever"),
}
"""The brat format's relation: which treatment treats which problem."""

INIT = '''"""The $name corpus plugin: importing it registers the corpus folder (the entry point in pyproject.toml)."""

from pathlib import Path

from clinical_corpora.core.registry import corpora

corpora.register("$name", Path(__file__).parent)
'''

CORPUS_YAML = """name: $name
version: 0.1.0
pretty_name: $name
description: >
  $description
license: cc0-1.0
access:
  public: true
  how: the sample is embedded in the package; say here where the real notes come from
citation: |
  @misc{$name,
    title = {$name},
    year = {2026}
  }
homepage: https://example.org/$name
builder: $builder
sources:
  notes:
    path: sample/notes
    kind: directory
    description: a BRAT folder, one subfolder per split holding <note>.txt and <note>.ann; invented.
configs:
  notes:
    description: $config_description
    splits: [train, test]
    default: true
task_categories: [token-classification]
tags: [clinical]
gates:
  max_rejects: 0
  expectations:
    - table: notes
      expectation: expect_table_row_count_to_be_between
      min_value: 1
    - table: notes.entities
      expectation: expect_column_values_to_be_in_set
      column: label
      value_set: [problem, test, treatment]
$declaration"""

BRAT_DECLARATION = """# The generic BRAT builder releases one row per note with what this section declares, each
# closed set a ClassLabel; an annotation outside it (or broken) is quarantined with file, line
# and reason, the rest of its note released.
brat:
  splits: {train: train, test: test}  # split: its folder in source notes
  entities: [problem, test, treatment]
  relations: [treats]  # R lines: Arg1 and Arg2, entities of the same note
  attributes:  # A lines on entities: name: its closed values (binary: an attribute with no value)
    Status: [ordered, pending, started, given, continued]
"""
FORMATS: dict[str, dict[str, str]] = {
    "python": {
        "description": "Clinical notes with problem, test and treatment mentions in BRAT standoff (the sample: "
        "three invented notes).",
        "builder": "$name.builder:NoteBuilder",
        "config_description": "one row per note with its entities",
        "declaration": "",
        "labels": "the labels in `$name/records.py` and `$name/corpus.yaml`",
        "builder_note": "",
    },
    "brat": {
        "description": "Clinical notes with problem, test and treatment mentions, the status of tests and\n  "
        "treatments and which treatment treats which problem, in BRAT standoff (the sample: three\n  invented notes).",
        "builder": "clinical_corpora.builders.generic_brat.builder:BratBuilder",
        "config_description": "one row per note with its entities (and their Status) and treats relations",
        "declaration": BRAT_DECLARATION,
        "labels": "the labels under `brat:` in `$name/corpus.yaml`",
        "builder_note": "\nThere is no builder to write: the package's generic BRAT builder builds the corpus from its "
        "corpus.yaml\n(`clincorp new-corpus $name --format brat`).",
    },
}
"""What each format's corpus.yaml and README say."""

RECORDS = '''"""The $name corpus's records: one note with its entities. The note text comes from the licensed
source, so it is typed ``LicensedText`` (a span's ``text`` is, in ``Span``): the text-free release replaces it by
a recipe."""

from __future__ import annotations

from typing import Literal

from clinical_corpora.schemas.bounded import Identifier
from clinical_corpora.schemas.licensed import LicensedText
from clinical_corpora.schemas.spans import Span, TextRecord

EntityLabel = Literal["problem", "test", "treatment"]


class Entity(Span):
    """A BRAT text-bound annotation: where it lies (``start``, ``end``, its ``text``) and its type."""

    id: Identifier
    label: EntityLabel


class Note(TextRecord):
    id: Identifier
    text: LicensedText
    entities: list[Entity]
'''

BUILDER = '''"""Build the $name corpus from a BRAT folder (``<split>/<note>.txt`` and ``.ann``): one row per note."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import Any

from clinical_corpora.builders.contract.base import BuildContext, Builder, Row
from clinical_corpora.builders.contract.display import DocumentDisplay, Mark, Passage, RowReader
from clinical_corpora.builders.sources.brat.folder import brat_documents
from clinical_corpora.builders.sources.brat.standoff import read_brat_document
from clinical_corpora.core.errors import SourceError

from $name.records import Note

SOURCE = "notes"


class NoteBuilder(Builder):
    CONFIGS = {"notes": Note}
    RECORD_CONFIG = "notes"
    DOCUMENTS = {SOURCE: "<split>/<note>.txt with its <note>.ann"}

    def generate(self, ctx: BuildContext) -> Iterator[Row]:
        root = ctx.source(SOURCE)
        for document in brat_documents(root):
            with ctx.record(f"{root}/{document.id}"):
                split = document.id.rpartition("/")[0]
                if not split:
                    raise SourceError(root / document.id, "expected a note inside a split folder (train/, test/)")
                text, annotations = read_brat_document(document)
                entities = [
                    {"id": bound.id, "start": bound.start, "end": bound.end, "text": text[bound.start : bound.end]}
                    | {"label": bound.type}
                    for bound in annotations.textbounds
                ]
                yield Row("notes", split, Note.model_validate({"id": document.id, "text": text, "entities": entities}))

    def source_documents(self, ctx: BuildContext, config: str, row: Mapping[str, Any]) -> list[str]:
        return [f"{SOURCE}:{row['id']}"]

    def read_documents(self, ctx: BuildContext, locators: Collection[str]) -> Iterator[tuple[str, str]]:
        for document in brat_documents(ctx.source(SOURCE)):
            if f"{SOURCE}:{document.id}" in locators:
                yield f"{SOURCE}:{document.id}", read_brat_document(document)[0]

    def displays(self, rows: RowReader) -> Iterator[DocumentDisplay]:
        for split, note in rows("notes", None):
            marks = [
                Mark(entity["id"], "entity", entity["label"], [(entity["start"], entity["end"])])
                for entity in note["entities"]
            ]
            labels = sorted({entity["label"] for entity in note["entities"]})
            passage = Passage("note", note["id"], note["text"], marks)
            yield DocumentDisplay(note["id"], split, labels, [passage], records=[("notes", note["id"])])
'''

PYPROJECT = """[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "$distribution"
version = "0.1.0"
description = "The $name corpus for clinical-corpora (clincorp release $name)."
requires-python = ">=3.11"
dependencies = ["clinical-corpora"]

[project.optional-dependencies]
test = ["pytest>=8"]

[project.entry-points."clinical_corpora.plugins"]
$name = "$name"

[tool.setuptools.packages.find]
include = ["$name", "$name.*"]  # the sample's folders too, as data-only packages: no packaging warning

[tool.setuptools.package-data]
"*" = ["corpus.yaml", "*.txt", "*.ann"]
"""

TEST = '''"""The $name corpus releases, text-free releases, validates and views its sample as it stands."""

from pathlib import Path

from clinical_corpora.builders.commands.main import main


def test_the_sample_releases_validates_and_views(tmp_path: Path) -> None:
    assert main(["release", "$name", "--text-free", "--out", str(tmp_path / "releases")]) == 0
    releases = sorted((tmp_path / "releases" / "$name").iterdir())
    assert [release.name for release in releases] == ["$name-0.1.0+sample", "$name-0.1.0+sample.text-free"]
    for release in releases:
        assert main(["validate", str(release)]) == 0
        assert main(["view", str(release), "--out", str(tmp_path / "views" / release.name)]) == 0
'''

README = """# $name

A corpus plugin for clinical-corpora, made by `clincorp new-corpus $name`. Install it with
`pip install -e .`; then `clincorp release $name --text-free --out releases` releases its sample,
`clincorp validate` and `clincorp view` read the releases, and `pytest` runs its test.
Replace the sample in `$name/sample/notes/` (BRAT `.txt`/`.ann`, one folder per split) and
$labels by your own.$builder_note
"""


def skeleton_files(name: str, form: str = "python") -> dict[str, str]:
    """Path relative to the project folder → content, for the corpus ``name`` (a Python identifier) in format
    ``form``: ``python`` (its own builder and record models) or ``brat`` (declared in corpus.yaml alone)."""
    values = {"name": name, "distribution": name.replace("_", "-")}
    values |= {key: Template(text).substitute(values) for key, text in FORMATS[form].items()}
    files = {
        "pyproject.toml": PYPROJECT,
        "README.md": README,
        f"{name}/__init__.py": INIT,
        f"{name}/corpus.yaml": CORPUS_YAML,
        f"tests/test_{name}.py": TEST,
    }
    if form == "python":
        files |= {f"{name}/records.py": RECORDS, f"{name}/builder.py": BUILDER}
    written = {path: Template(text).substitute(values) for path, text in files.items()}
    for split, note, text in SAMPLE_NOTES:
        folder = f"{name}/sample/notes/{split}"
        written[f"{folder}/{note}.txt"] = text
        written[f"{folder}/{note}.ann"] = sample_standoff(note, text, with_brat_declaration=form == "brat")
    return written


def sample_standoff(note: str, text: str, *, with_brat_declaration: bool) -> str:
    """The ``.ann`` of a sample note: its entities, each at its phrase's first place in ``text``; with the brat
    format's declaration, also the Status of its tests and treatments and its treats relation."""
    bounds = []
    for number, (label, phrase) in enumerate(SAMPLE_ENTITIES[note], start=1):
        start = text.index(phrase)
        bounds.append(TextBound(f"T{number}", label, ((start, start + len(phrase)),), phrase))
    if not with_brat_declaration:
        return write_brat(BratDocument(tuple(bounds)))
    bound_of = {bound.text: bound.id for bound in bounds}
    statuses = SAMPLE_STATUS[note].items()
    attributes = [
        Attribute(f"A{n}", "Status", bound_of[phrase], value) for n, (phrase, value) in enumerate(statuses, 1)
    ]
    treatment, problem = SAMPLE_TREATS[note]
    relation = Relation("R1", "treats", (("Arg1", bound_of[treatment]), ("Arg2", bound_of[problem])))
    return write_brat(BratDocument(tuple(bounds), attributes=tuple(attributes), relations=(relation,)))


def write_skeleton(name: str, out: Path, form: str = "python") -> list[Path]:
    """Write the skeleton of corpus ``name`` in format ``form`` into ``out`` (absent or empty); the files written."""
    written = []
    for relative, content in sorted(skeleton_files(name, form).items()):
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8", newline="\n")
        written.append(path)
    return written

"""The PHI gate: invented PHI of every category planted in 1% of the string leaves of every sample release (full
and text-free, parquet at any depth, JSON, JSON Lines, the card) is found at its place and never printed; the
untouched releases and de-identification placeholders are not findings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.plugins import find_corpus
from clinical_corpora.builders.release.phi import phi_gate, public_text
from clinical_corpora.validation.phi import phi_found
from clinical_corpora.validation.phi_gate import PhiScan, scan_release

PATTERN_SEEDS = {
    "date": "seen on 03/14/2151",
    "age": "a 93 y/o man",
    "phone": "call (617) 555-0142",
    "email": "k.moss@example.net",
    "url": "https://patient-portal.example.org/u/4412",
    "ip_address": "from 10.22.31.4",
    "ssn": "SSN 123-45-6789",
    "record_number": "MRN: 00482913",
    "zip_code": "Springfield, MA 01103",
    "address": "lives at 42 Maple Avenue",
}
NAMES = (  # invented people, from a list written apart from validation/phi_names.py
    "Harriet Okonkwo Beatrice Lindqvist Desmond Fairweather Rosalind Achterberg Theodore Blackwood Priscilla Nakamura "
    "Gordon Vasquez Eleanor Whitcombe Raymond Castellano Lucille Brennan Clarence Mbeki Geraldine Holloway Franklin "
    "Abernathy Marjorie Pennington Vincent Delacroix Agnes Thornbury Howard Kowalczyk Doris Underhill Wallace Ferreira "
    "Margaret Osei Arthur Lindgren Josephine Quigley Leonard Petrakis Evelyn Marchetti Russell Oyelaran Irene Sandoval"
).split()
NAMES_MISSED = 0.05
"""The share of names from a list the patterns were not built from that may go unfound (the issue's bar)."""
HELD_OUT = (  # invented people of many origins, written apart from validation/phi_names.py and the census lists
    "Oluwaseun Adeyemi|Xiaoling Chen|Guadalupe Ramirez|Priya Raman|Dmitri Volkov|Aisha Mohammed|Hiroshi Tanaka|"
    "Ngozi Eze|Mateo Gonzalez|Siobhan Murphy|Anjali Desai|Kwame Mensah|Yusuf Ibrahim|Ingrid Johansson|Camille Dubois|"
    "Bjorn Larsen|Fatima Khan|Wei Zhang|Juan Carlos|Minh Nguyen|Rajesh Kumar|Svetlana Ivanova|Tomasz Nowak|"
    "Lucia Romano|Andile Dlamini|Keanu Kahale|Ximena Flores|Deshawn Jackson|Latoya Williams|Tremaine Brooks|"
    "Jolene Harper|Brayden Cole|Kaylee Morgan|Dakota Reyes|Marisol Vega|Esperanza Cruz|Yolanda Pierce|Cedric Dawson|"
    "Shaniqua Bell|Hamza Siddiqui|Soo-jin Park|Mei Ling|Raul Ortega|Ines Moreau|Giulia Bianchi|Olga Petrova|"
    "Nikhil Reddy|Ayesha Malik|Moshe Cohen|Liam Gallagher|Declan Byrne|Freya Nilsson|Astrid Berg|Omari Wallace|"
    "Jamal Carter|Imani Scott|Tyrone Gaines|Ebony Jenkins|Precious Adams|Misty Dawn"
).split("|")
NOT_NAMES = (
    "Social History|Lives Alone|Dataset Card|Hugging Face|True, False|In Hall|The Walker|Chest Pain|Data Fields|"
    "Living Status|Rows Per Split|Mean Age|Table Page|Myocardial Infarction|Metoprolol Tartrate|Lisinopril Hctz|"
    "Zosyn Vancomycin|Klebsiella Pneumoniae|Ekg Cxr|Protonix Pantoprazole|Lasix Furosemide|Knowtator Xml|"
    "alcohol_use|status time|EVENT TYPE|BigBio|SOCIAL HISTORY"
).split("|")
WRITTEN = (  # one invented person, as ids, headings, logins, signatures and references write a name
    "Dr. Adeyemi|Mrs Okonkwo|J. Okafor|J.A. Okafor|Okafor, Ngozi|Ngozi A. Okafor|NGOZI OKAFOR|ngozi okafor|"
    "ngozi_okafor|NgoziOkafor|Otis van Elst|Zoë Müller-Lüdenscheidt|Soo-jin Park|Иван Петров|Siobhan O'Brien"
).split("|")
MIMESIS_LOCALES = (
    "cs da de de-at de-ch el en en-au en-gb es es-mx et fi fr hr hu is it kk nl no pl pt pt-br ru sk sv tr uk"
).split()
"""The locales of mimesis (another fake-data package than the Faker lists the gate is built from) written in a
cased script."""
SEEDS = [*PATTERN_SEEDS.items(), *(("name", f"{a} {b}") for a, b in zip(NAMES[::2], NAMES[1::2], strict=True))]


def _planter() -> Any:
    """Each call: the next seed (category, text), cycling."""
    state = {"next": 0}

    def plant() -> tuple[str, str]:
        seed = SEEDS[state["next"] % len(SEEDS)]
        state["next"] += 1
        return seed

    return plant


def _plant_value(value: Any, path: str, leaves: list[tuple[str, Any, Any]]) -> None:
    """Every string leaf under ``value`` as (path, container, key)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, item in items:
        child = f"{path}.{key}" if isinstance(key, str) and path else key if isinstance(key, str) else f"{path}[]"
        if isinstance(item, str):
            leaves.append((child, value, key))
        else:
            _plant_value(item, child, leaves)


def _plant(folder: Path, skipped: set[tuple[str, str]]) -> list[tuple[str, str, int | None, str]]:
    """1% of every file's string leaves (at least one) get a seed; (file, field, row or line, category) of each."""
    planted: list[tuple[str, str, int | None, str]] = []
    plant = _planter()
    for path in sorted(
        p for p in folder.rglob("*") if p.is_file() and p.suffix in (".parquet", ".json", ".jsonl", ".md")
    ):
        name = path.relative_to(folder).as_posix()
        if path.suffix == ".parquet":
            table = pq.read_table(path)
            rows = table.to_pylist()
            leaves = []
            for number, row in enumerate(rows):
                found: list[tuple[str, Any, Any]] = []
                _plant_value(row, "", found)
                leaves += [
                    (number, *leaf)
                    for leaf in found
                    if (name.split("/")[1] if "/" in name else "", leaf[0]) not in skipped
                ]
            for number, field, container, key in leaves[::100]:
                category, text = plant()
                container[key] = f"{container[key]} {text} {len(planted)}"
                planted.append((name, field, number, category))
            pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
        elif path.suffix == ".md":
            lines = path.read_text(encoding="utf-8").split("\n")
            for index in range(0, len(lines), 100):
                category, text = plant()
                lines[index] += f" {text}"
                planted.append((name, "", index + 1, category))
            path.write_text("\n".join(lines), encoding="utf-8")
        else:
            planted += _plant_json(path, name, plant)
    return planted


def _plant_json(path: Path, name: str, plant: Any) -> list[tuple[str, str, int | None, str]]:
    planted: list[tuple[str, str, int | None, str]] = []
    lines = (
        path.read_text(encoding="utf-8").splitlines() if path.suffix == ".jsonl" else [path.read_text(encoding="utf-8")]
    )
    values = [json.loads(line) for line in lines]
    for number, value in enumerate(values, 1):
        leaves: list[tuple[str, Any, Any]] = []
        _plant_value(value, "", leaves)
        for field, container, key in leaves[::100]:
            category, text = plant()
            container[key] = f"{container[key]} {text}"
            planted.append((name, field, number if path.suffix == ".jsonl" else None, category))
    path.write_text("".join(json.dumps(value) + "\n" for value in values), encoding="utf-8")
    return planted


def _scan(folder: Path, corpus: str, licensed: set[tuple[str, str]]) -> PhiScan:
    public = public_text(find_corpus(corpus).folder / "corpus.yaml")
    return scan_release(
        folder, lambda file, field: (file.split("/")[1] if file.startswith("data/") else "", field) in licensed, public
    )


def _licensed(text_free: Path) -> set[tuple[str, str]]:
    fields = json.loads((text_free / "manifest.json").read_text(encoding="utf-8"))["licensed_fields"]
    return {(config, field) for config, paths in fields.items() for field in paths}


def test_untouched_releases_have_no_finding(releases: tuple[Path, Path]) -> None:
    full, text_free = releases
    corpus = full.parent.name
    assert _scan(text_free, corpus, set()).findings == []
    scan = _scan(full, corpus, _licensed(text_free))
    assert scan.findings == [] and scan.excluded_fields > 0


def test_planted_phi_is_found_at_its_place(releases: tuple[Path, Path], tmp_path: Path) -> None:
    full, text_free = releases
    licensed = _licensed(text_free)
    for release, skipped in ((full, licensed), (text_free, set())):
        folder = Path(shutil.copytree(release, tmp_path / release.name))
        planted = _plant(folder, skipped)
        scan = _scan(folder, full.parent.name, skipped)
        found = {(f.file, f.field, f.row if f.row is not None else f.line, f.category) for f in scan.findings}
        missed = [seed for seed in planted if seed not in found]
        names = [seed for seed in planted if seed[3] == "name"]
        assert {seed[0].rsplit(".", 1)[1] for seed in planted} == {"parquet", "json", "jsonl", "md"}
        assert [seed for seed in missed if seed[3] != "name"] == [], release.name
        assert len(names) > 0 and len([s for s in missed if s[3] == "name"]) <= NAMES_MISSED * len(names), release.name
        gate = phi_gate(scan, scan.findings, 0).as_dict()
        shown = json.dumps(gate)
        assert not gate["success"] and all(text not in shown for _, text in SEEDS)


def test_every_pattern_seed_is_found_in_its_category() -> None:
    missed = [seed for seed in PATTERN_SEEDS.items() if seed[0] not in [category for category, _ in phi_found(seed[1])]]
    assert missed == []


def _named(text: str) -> bool:
    return "name" in [category for category, _ in phi_found(text)]


def test_names_of_many_origins_are_found_and_phrases_are_not() -> None:
    missed = [name for name in HELD_OUT if not _named(f"seen by {name} today")]
    taken = [phrase for phrase in NOT_NAMES if _named(f"{phrase} of the release")]
    assert len(missed) <= NAMES_MISSED * len(HELD_OUT) and taken == []


def test_a_name_is_found_however_it_is_written() -> None:
    assert [written for written in WRITTEN if not _named(f"note {written} 7")] == []


def test_names_of_another_packages_lists_are_found() -> None:
    """Given names and surnames of 29 locales of mimesis, which the gate's lists are not drawn from."""
    from mimesis import Locale, Person

    people = [Person(Locale(locale), seed=index) for index, locale in enumerate(MIMESIS_LOCALES)]
    names = [f"{person.first_name()} {person.last_name()}" for person in people for _ in range(20)]
    missed = [name for name in names if not _named(f"{name} 12")]
    assert len(missed) <= NAMES_MISSED * len(names), missed


def test_mimic_placeholders_are_not_findings() -> None:
    note = (
        "Admission Date:  [**2151-7-16**]       Discharge Date:   [**2151-8-4**]\n"
        "Attending:[**First Name3 (LF) 1561**]  Dr. [**Last Name (STitle) 2271**]\n"
        "MRN [**Medical Record Number 4121**]\n"
        "Name: ___  Unit No: ___  Admission Date: ___  Phone: [**Telephone/Fax (1) 2010**] **NAME[AAA, BBB]"
    )
    assert phi_found(note) == []


def test_validate_runs_the_phi_gate_and_writes_its_report(
    sample_variant: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = Path(shutil.copytree(sample_variant("sdoh", "text-free"), tmp_path / "release"))
    report = tmp_path / "phi.jsonl"
    status = main(["validate", str(release), "--phi-report", str(report)])
    printed = capsys.readouterr()
    lines = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    assert status == 0 and "gate phi passed: observed 0 findings" in printed.out and lines == []

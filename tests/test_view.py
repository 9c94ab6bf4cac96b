"""``clincorp view`` in a real browser (Debian's headless chromium, driven by selenium): every span, event
argument, chain member and query of the parquet has its element on its document's page, nothing is fetched
from outside ``file://``, the index's search and filters work, violations link to their records, a text-free
release shows no text and a rehydrated one the same pages as the full release. A screenshot per corpus goes to
``$CLINCORP_SCREENSHOTS`` (default: a temporary folder)."""

from __future__ import annotations

import html
import json
import math
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from clinical_corpora.builders.commands.main import main
from clinical_corpora.builders.contract.display import DocumentDisplay, Group, Mark, Member, Passage
from clinical_corpora.builders.sources.knowtator.folder import knowtator_files
from clinical_corpora.builders.sources.knowtator.xml import read_knowtator_file
from clinical_corpora.builders.view import palette
from clinical_corpora.builders.view.pages import page_view
from clinical_corpora.builders.view.reading import gate_line
from clinical_corpora.core.release_records import GateRecord
from tests.conftest import SampleVariant

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CORPORA = ["clicr", "odie_anaphora", "rad_coref", "sdoh", "snomed_el"]
VARIANTS = ["full", "text-free"]  # a rehydrated release is the full one byte for byte, and so are its pages
SDOH_SAMPLE = Path(__file__).resolve().parents[1] / "corpora" / "sdoh" / "sample" / "shac"
HOSTILE = '<img src="http://example.invalid/x.png"><script>document.title = "pwned"</script>'
URL_IN_ATTRIBUTE = re.compile(r"""(?:src|href|action|srcset|poster|data)\s*=\s*["']?\s*(?:https?:)?//""", re.I)

Counts = dict[str, dict[str, int]]
"""Document id → CSS selector → how many elements its page must hold."""


@pytest.fixture(scope="session")
def browser() -> Iterator[WebDriver]:
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        pytest.fail(
            f"the viewer's tests need Debian's chromium and its driver ({', '.join(missing)} missing): "
            "apt-get install chromium chromium-driver"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("CLINCORP_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def releases(sample_variant: SampleVariant) -> Callable[[str, str], Path]:
    """``releases(corpus, variant)``: the sample's full release, its text-free variant or the release rehydrated
    from it, made once per session."""
    return sample_variant


def view(release: Path, out: Path) -> Path:
    assert main(["view", str(release), "--out", str(out)]) == 0
    return out / "index.html"


def documents(browser: WebDriver, index: Path) -> dict[str, str]:
    """Document id → page URL, as the index lists them."""
    browser.get(index.as_uri())
    links = "document.querySelectorAll('#documents tbody tr td:first-child a')"
    return dict(browser.execute_script(f"return [...{links}].map(a => [a.innerText, a.href])"))


def table_rows(browser: WebDriver, selector: str) -> list[list[str]]:
    """The text of each cell of the table rows ``selector`` finds, read in one call."""
    script = "return [...document.querySelectorAll(arguments[0])].map(r => [...r.cells].map(c => c.innerText))"
    return list(browser.execute_script(script, selector))


PAGE_FACTS = """
const [selectors] = arguments;
const policy = document.querySelector("meta[http-equiv=Content-Security-Policy]");
return {
  counts: Object.fromEntries(selectors.map(s => [s, document.querySelectorAll(s).length])),
  fetched: ["navigation", "resource"].flatMap(t => performance.getEntriesByType(t)).map(e => e.name),
  policy: policy ? policy.content : "",
  notice: document.getElementById("text-free-notice") !== null,
  unplaced: document.querySelectorAll(".passage .notice.error").length,
};
"""


def page_facts(browser: WebDriver, selectors: list[str]) -> dict[str, Any]:
    """What the annotation test checks on a page, read in one call: the elements ``selectors`` find, the URLs
    it loaded, its content security policy, whether it shows the text-free notice, and its unplaced marks."""
    return dict(browser.execute_script(PAGE_FACTS, selectors))


def fetched_outside(browser: WebDriver) -> list[str]:
    """URLs the page loaded (itself and its resources) that are not file:// ones."""
    script = "return ['navigation', 'resource'].flatMap(t => performance.getEntriesByType(t)).map(e => e.name)"
    return [name for name in browser.execute_script(script) if not name.startswith("file:")]


def rows(release: Path, config: str, columns: list[str]) -> Iterator[dict[str, Any]]:
    for path in sorted((release / "data" / config).glob("*.parquet")):
        yield from pq.read_table(path, columns=columns).to_pylist()


def expected_counts(corpus: str, release: Path) -> Counts:
    """What each document's page must hold, counted on the parquet."""
    counts: Counts = {}
    if corpus == "sdoh":
        for note in rows(release, "sdoh", ["id", "events", "unused_textbounds"]):
            arguments = sum(len(event["arguments"]) for event in note["events"])
            counts[note["id"]] = {
                ".tag[data-kind=trigger]": len(note["events"]),
                ".tag[data-kind=argument]": arguments,
                ".tag[data-kind=textbound]": len(note["unused_textbounds"]),
                "li.member[data-kind=event-member]": len(note["events"]) + arguments,
            }
    elif corpus == "snomed_el":
        for note in rows(release, "snomed_el", ["note_id", "annotations"]):
            counts[note["note_id"]] = {".tag[data-kind=concept]": len(note["annotations"])}
    elif corpus == "rad_coref":
        for patient in rows(release, "rad_coref", ["patient_id", "reports", "mentions", "chains"]):
            counts[patient["patient_id"]] = {
                ".passage": len(patient["reports"]),
                ".tag[data-kind=mention]": len(patient["mentions"]),
                "li.group.chain": len(patient["chains"]),
                "li.member[data-kind=chain-member]": sum(len(chain["mention_ids"]) for chain in patient["chains"]),
            }
    elif corpus == "odie_anaphora":
        for note in rows(release, "odie_anaphora", ["id", "markables", "pairs", "chains"]):
            counts[note["id"]] = {
                ".tag[data-kind=markable]": len(note["markables"]),
                "li.group.pair": len(note["pairs"]),
                "li.member[data-kind=pair-member]": 2 * len(note["pairs"]),
                "li.member[data-kind=chain-member]": sum(len(chain["markable_ids"]) for chain in note["chains"]),
            }
    else:
        for case in rows(release, "clicr_documents", ["id", "entities", "sections", "learning_points"]):
            counts[case["id"]] = {
                ".tag[data-kind=entity]": len(case["entities"]),
                "li.group.query": 0,
                ".listing li": len(case["learning_points"]),
            }
        for query in rows(release, "clicr", ["document_id"]):
            counts[query["document_id"]]["li.group.query"] += 1
    return counts


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("corpus", CORPORA)
def test_every_annotation_has_its_element_and_nothing_leaves_file(
    corpus: str,
    variant: str,
    releases: Callable[[str, str], Path],
    browser: WebDriver,
    screenshots: Path,
    tmp_path: Path,
) -> None:
    release = releases(corpus, variant)
    index = view(release, tmp_path / "view")
    expected = expected_counts(corpus, release)
    pages = documents(browser, index)
    assert sorted(pages) == sorted(expected)
    assert not fetched_outside(browser)
    for document, url in pages.items():
        browser.get(url)
        facts = page_facts(browser, list(expected[document]))
        assert facts["counts"] == expected[document], document
        assert not [name for name in facts["fetched"] if not name.startswith("file:")], document
        assert "default-src 'none'" in facts["policy"]
        assert facts["notice"] == (variant == "text-free")
        if variant == "full":
            assert not facts["unplaced"], f"{document}: unplaced marks"
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors  # a script or style the page's policy refused would be logged here
    for page in (tmp_path / "view").rglob("*.html"):
        assert not URL_IN_ATTRIBUTE.search(page.read_text(encoding="utf-8")), page
    first = next(iter(pages.values()))
    browser.get(first)
    height = browser.execute_script("return document.body.scrollHeight")
    browser.set_window_size(1400, min(max(height + 40, 600), 2600))
    browser.save_screenshot(str(screenshots / f"{corpus}{'' if variant == 'full' else '.' + variant}.png"))
    browser.set_window_size(1400, 1000)


def test_rehydrated_pages_are_the_full_ones(releases: Callable[[str, str], Path], tmp_path: Path) -> None:
    """The pages are drawn from the release's bytes alone (not its folder), and a rehydrated release is the full
    one byte for byte (tests/test_text_free.py)."""
    full = view(releases("sdoh", "full"), tmp_path / "full").parent
    rehydrated = view(releases("sdoh", "rehydrated"), tmp_path / "rehydrated").parent
    assert tree(full) == tree(rehydrated)


def test_text_free_pages_hold_no_text(releases: Callable[[str, str], Path], tmp_path: Path) -> None:
    full = view(releases("sdoh", "full"), tmp_path / "full").parent
    text_free = view(releases("sdoh", "text-free"), tmp_path / "text-free").parent
    texts = [note["text"] for note in rows(releases("sdoh", "full"), "sdoh", ["text"])]
    pages = "".join(page.read_text(encoding="utf-8") for page in text_free.rglob("*.html"))
    pieces = {text[start : start + 24] for text in texts for start in range(0, len(text) - 24, 12)}
    assert pieces and not [piece for piece in pieces if piece in pages]  # no run of the notes' text
    shown = [passage_text(page.read_text(encoding="utf-8")) for page in (full / "docs").glob("*.html")]
    assert sorted(shown) == sorted(texts)


def passage_text(page: str) -> str:
    """The text of a page's one passage, its tags (labels of marks) left out."""
    body = page.split('<div class="text', 1)[1].split(">", 1)[1].split("</div>", 1)[0]
    body = re.sub(r'<span class="tag[^"]*"[^>]*>[^<]*</span>', "", body)
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="session")
def edited_sdoh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release of the SDOH sample with a hostile note text and an event without its required Status,
    tolerated by a gates overlay (so validation.json lists it)."""
    work = tmp_path_factory.mktemp("edited-sdoh")
    shac = Path(shutil.copytree(SDOH_SAMPLE, work / "shac"))
    note = shac / "dev" / "mimic" / "0301.txt"
    note.write_text(note.read_text(encoding="utf-8") + HOSTILE + "\n", encoding="utf-8")
    ann = shac / "dev" / "mimic" / "0301.ann"
    ann.write_text(ann.read_text(encoding="utf-8").replace("LivingStatus:T1 Status:T2 ", "LivingStatus:T1 "))
    overlay = work / "tolerate.yaml"
    tolerate = {"table": "sdoh.required_arguments", "expectation": "expect_column_values_to_be_in_set"}
    overlay.write_text(yaml.safe_dump({"expectations": [{**tolerate, "column": "missing", "mostly": 0.5}]}))
    out = work / "releases"
    command = ["release", "sdoh", "--source", f"shac={shac}", "--gates", str(overlay), "--out", str(out)]
    assert main(command) == 0
    [release] = (out / "sdoh").iterdir()
    return release


def test_a_violation_links_to_its_record_and_hostile_text_stays_text(
    edited_sdoh: Path, browser: WebDriver, tmp_path: Path
) -> None:
    index = view(edited_sdoh, tmp_path / "view")
    browser.get(index.as_uri())
    [violation] = browser.find_elements(By.CSS_SELECTOR, "#violations tr.violation")
    assert "tolerated" in violation.text and "dev/mimic/0301" in violation.text
    violation.find_element(By.TAG_NAME, "a").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "dev/mimic/0301"
    assert "sdoh.required_arguments" in browser.find_element(By.ID, "violations").text
    assert HOSTILE in browser.find_element(By.CSS_SELECTOR, ".passage .text").text
    assert not browser.find_elements(By.CSS_SELECTOR, "img") and browser.title != "pwned"
    assert not fetched_outside(browser)


def test_index_search_and_filters(
    edited_sdoh: Path, releases: Callable[[str, str], Path], browser: WebDriver, tmp_path: Path
) -> None:
    notes = list(rows(edited_sdoh, "sdoh", ["id", "split", "events"]))
    browser.get(view(edited_sdoh, tmp_path / "view").as_uri())

    def shown() -> list[str]:
        visible = browser.find_elements(By.CSS_SELECTOR, "#documents tbody tr:not(.hidden) td:first-child a")
        return sorted(link.text for link in visible)

    assert shown() == sorted(note["id"] for note in notes)
    search = browser.find_element(By.ID, "search")
    search.send_keys("uw")
    assert shown() == sorted(note["id"] for note in notes if "uw" in note["id"])
    search.clear()
    search.send_keys(" ")  # an input event with an empty query: every note again
    Select(browser.find_element(By.ID, "split")).select_by_visible_text("dev")
    split_name = {0: "train", 1: "dev", 2: "test"}
    assert shown() == sorted(note["id"] for note in notes if split_name[note["split"]] == "dev")
    Select(browser.find_element(By.ID, "split")).select_by_index(0)
    Select(browser.find_element(By.ID, "label")).select_by_visible_text("Country")
    assert shown() == sorted(note["id"] for note in notes if any(e["type_name"] == "Country" for e in note["events"]))
    Select(browser.find_element(By.ID, "label")).select_by_index(0)
    browser.find_element(By.ID, "flagged").click()
    assert shown() == ["dev/mimic/0301"]
    assert int(browser.find_element(By.ID, "shown").text) == 1


def test_out_must_be_a_new_or_empty_folder_or_an_earlier_view(
    releases: Callable[[str, str], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = releases("snomed_el", "full")
    (tmp_path / "file").write_text("x")
    assert main(["view", str(release), "--out", str(tmp_path / "file")]) == 1
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    assert main(["view", str(release), "--out", str(tmp_path / "other")]) == 1
    err = capsys.readouterr().err
    assert "is a file, not a folder" in err and "not a clincorp view" in err
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine" and len(list((tmp_path / "other").iterdir())) == 1
    view(release, tmp_path / "again")
    first = tree(tmp_path / "again")
    view(release, tmp_path / "again")
    assert tree(tmp_path / "again") == first
    assert main(["view", str(tmp_path), "--out", str(tmp_path / "x")]) == 1
    assert "has no manifest.json" in capsys.readouterr().err


def test_two_annotators_side_by_side(releases: Callable[[str, str], Path], browser: WebDriver, tmp_path: Path) -> None:
    """The ODIE sample's two annotators: every span each marked has its row, with the verdict its labels give."""
    sample = Path(__file__).resolve().parents[1] / "corpora" / "odie_anaphora" / "sample"
    marked = {
        name: {
            document.doc_id: {tuple(tuple(f) for f in m.fragments): m.semantic_class for m in document.markables}
            for document in (
                read_knowtator_file(path, sample / "text")
                for path in knowtator_files(sample / name, quiet=True).values()
            )
        }
        for name in ("annotator_a", "annotator_b")
    }
    pages = documents(browser, view(releases("odie_anaphora", "full"), tmp_path / "view"))
    assert set(pages) == set(marked["annotator_a"])
    for document, url in pages.items():
        browser.get(url)
        spans = [row for row in table_rows(browser, "#annotators tr.overlay-row") if row and row[0].startswith("span")]
        a, b = marked["annotator_a"][document], marked["annotator_b"][document]
        assert len(spans) == len(set(a) | set(b)), document
        for _, _, _, label_a, label_b, verdict in spans:
            expected = "match" if label_a == label_b else "label differs"
            if "—" in (label_a, label_b):
                expected = "only annotator_b" if label_a == "—" else "only annotator_a"
            assert verdict == expected
        assert sum(label != "—" for _, _, _, label, _, _ in spans) == len(a)
        assert sum(label != "—" for _, _, _, _, label, _ in spans) == len(b)


def test_rad_coref_annotators_mentions_side_by_side(
    releases: Callable[[str, str], Path], browser: WebDriver, tmp_path: Path
) -> None:
    """Each rad_coref annotator's mentions, by report, beside the other's; not for a text-free release (its
    annotators' mentions cannot be checked against report texts it does not hold)."""
    annotations = Path(__file__).resolve().parents[1] / "corpora" / "rad_coref" / "sample" / "annotations"
    marked = {
        name: {
            (ann.parent.name, ann.stem, line.split("\t")[1].split()[1], line.split("\t")[1].split()[2])
            for ann in (annotations / name).rglob("*.ann")
            for line in ann.read_text(encoding="utf-8").splitlines()
            if line.startswith("T")
        }
        for name in ("annotator_a", "annotator_b")
    }
    full = documents(browser, view(releases("rad_coref", "full"), tmp_path / "full"))
    spans = 0
    for url in full.values():
        browser.get(url)
        spans += sum(row[0].startswith("span") for row in table_rows(browser, "#annotators tr.overlay-row") if row)
    assert spans == len(marked["annotator_a"] | marked["annotator_b"])
    for url in documents(browser, view(releases("rad_coref", "text-free"), tmp_path / "text-free")).values():
        browser.get(url)
        assert not browser.find_elements(By.ID, "annotators")


LAID_OUT = """
const tags = [...document.querySelectorAll(".passage .text .tag")];
return {
  tags: tags.length,
  above: tags.filter(t => {
    const text = t.closest(".seg") && t.closest(".seg").querySelector(".u");
    return t.closest(".labels") && (!text || t.getBoundingClientRect().bottom <= text.getBoundingClientRect().top + 1);
  }).length,
  arcs: document.querySelectorAll(".passage svg.arcs g").length,
  labels: [...document.querySelectorAll(".passage svg.arcs text")].map(t => t.textContent),
};
"""


def test_labels_sit_above_the_text_and_arcs_join_triggers_to_arguments(
    releases: Callable[[str, str], Path], browser: WebDriver, tmp_path: Path
) -> None:
    """As brat draws an event: each label above its span (none inline in the text), and an arc from the trigger's
    label to each argument's, named by the argument's role."""
    release = releases("sdoh", "full")
    notes = {note["id"]: note for note in rows(release, "sdoh", ["id", "events"])}
    for document, url in documents(browser, view(release, tmp_path / "view")).items():
        browser.get(url)
        laid = browser.execute_script(LAID_OUT)
        assert laid["tags"] and laid["above"] == laid["tags"], document
        roles = [argument["role"] for event in notes[document]["events"] for argument in event["arguments"]]
        drawn = [label.split(" (")[0] for label in laid["labels"]]  # "Status (past)": the role and its subtype
        assert laid["arcs"] == len(roles) and sorted(drawn) == sorted(roles), document


def test_every_chain_and_type_has_a_colour_of_its_own() -> None:
    """Forty chains get forty colours (no palette of twelve going round), and marks in no group one per type."""
    text = "x " * 100
    marks = [Mark(f"c{n}", "mention", "Finding", [(2 * n, 2 * n + 1)], group=f"chain{n}") for n in range(40)]
    marks += [Mark(f"e{n}", "entity", label, [(80 + 2 * n, 81 + 2 * n)]) for n, label in enumerate(["a", "b", "a"])]
    groups = [Group(f"chain{n}", "chain", "chain", [Member(f"c{n}")]) for n in range(40)]
    page = page_view(DocumentDisplay("d", "train", [], [Passage("p", "note", text, marks)], groups))
    colours = [mark.colour for mark in page.marks]
    assert len(set(colours[:40])) == 40 and colours[40] != colours[41] and colours[40] == colours[42]
    assert "c-none" not in colours and page.colours == 42
    assert len({palette.colour(n) for n in range(page.colours)}) == 42


def test_a_systems_predictions_drawn_against_the_gold(
    releases: Callable[[str, str], Path], browser: WebDriver, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--predictions`` with the CSV ``clincorp score snomed`` reads: on each note's page, a span both mark alike,
    one only the gold marks and one the system labels otherwise, drawn on the text with their verdicts."""
    release = releases("snomed_el", "full")
    [note] = [n for n in rows(release, "snomed_el", ["note_id", "annotations"]) if n["note_id"] == "19990001-DS-4"]
    spans = note["annotations"]
    lines = ["note_id,start,end,concept_id"]
    lines += [f"{note['note_id']},{s['start']},{s['end']},{s['concept_id']}" for s in spans[2:]]  # misses two
    lines[1] = lines[1].rsplit(",", 1)[0] + ",22298006"  # labels one otherwise
    predictions = tmp_path / "predictions.csv"
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pages = documents(browser, view_with(release, tmp_path / "view", predictions))
    browser.get(pages[note["note_id"]])
    tally = browser.find_element(By.CSS_SELECTOR, "#annotators p.muted").text
    assert f"match: {len(spans) - 3}" in tally and "only gold: 2" in tally and "label differs: 1" in tally
    compared = [tag.text for tag in browser.find_elements(By.CSS_SELECTOR, ".compared .tag")]
    assert "system: SCTID 22298006" in compared and sum(t.startswith("gold: ") for t in compared) == 3
    assert not [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    predictions.write_text("note_id,start,end,concept_id\nnot-a-note,0,3,22298006\n", encoding="utf-8")
    assert main(["view", str(release), "--out", str(tmp_path / "v2"), "--predictions", str(predictions)]) == 1
    assert "not-a-note" in capsys.readouterr().err
    sdoh = ["view", str(releases("sdoh", "full")), "--out", str(tmp_path / "v3"), "--predictions", str(predictions)]
    assert main(sdoh) == 1
    assert (
        "expected a folder of BRAT files at the release's {split}/{source}/<doc>.ann paths" in capsys.readouterr().err
    )


def view_with(release: Path, out: Path, predictions: Path) -> Path:
    assert main(["view", str(release), "--out", str(out), "--predictions", str(predictions)]) == 0
    return out / "index.html"


def test_a_systems_chains_drawn_against_the_gold(
    releases: Callable[[str, str], Path], browser: WebDriver, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """rad_coref chains in the JSON ``clincorp score coref`` reads: a gold chain and a singleton merged into one
    give mentions linked otherwise on the text, and two gold chains only and one system chain only in the table."""
    release = releases("rad_coref", "full")
    patients = {p["patient_id"]: p["chains"] for p in rows(release, "rad_coref", ["patient_id", "chains"])}
    chains = {patient: [chain["mention_ids"] for chain in found] for patient, found in patients.items()}
    patient = next(p for p, found in chains.items() if len(found) > 2 and any(len(c) == 1 for c in found))
    single = next(chain for chain in chains[patient] if len(chain) == 1)
    first = next(chain for chain in chains[patient] if chain is not single)
    rest = [chain for chain in chains[patient] if chain is not single and chain is not first]
    predictions = tmp_path / "chains.json"
    predictions.write_text(json.dumps({**chains, patient: [first + single, *rest]}), encoding="utf-8")
    pages = documents(browser, view_with(release, tmp_path / "view", predictions))
    browser.get(pages[patient])
    tally = browser.find_element(By.CSS_SELECTOR, "#annotators p.muted").text
    assert "only gold: 2" in tally and "only system: 1" in tally and "label differs" in tally
    differing = [tag.text for tag in browser.find_elements(By.CSS_SELECTOR, ".compared .tag.v-label")]
    assert differing and {label.split(":")[0] for label in differing} == {"gold", "system"}
    assert "gold: new entity" in differing  # the merged singleton: the system links it to the chain before it
    predictions.write_text(json.dumps({patient: [["no-such-mention"]]}), encoding="utf-8")
    assert main(["view", str(release), "--out", str(tmp_path / "v2"), "--predictions", str(predictions)]) == 1
    assert "no-such-mention" in capsys.readouterr().err


def test_gates_in_words_agreement_as_bars_and_n_a_apart_from_zero(
    releases: Callable[[str, str], Path], browser: WebDriver, tmp_path: Path
) -> None:
    """The index's gates: each agreement measure with a bar of its value, the leak gate's longest run in words
    (no dict), and a measure the documents could not give as "n/a", never as 0."""
    release = releases("sdoh", "text-free")
    browser.get(view(release, tmp_path / "view").as_uri())
    gates = {row[0]: row for row in table_rows(browser, "#gates tr.gate")}
    bars = browser.execute_script("return [...document.querySelectorAll('#gates meter')].map(m => m.value)")
    measured = [name for name in gates if name.startswith("agreement.")]
    assert measured and len(bars) == len(measured) and all(0 < bar <= 1 for bar in bars)
    assert gates["leak"][2].startswith("longest shared run") and "{" not in gates["leak"][2]
    unmeasurable = GateRecord(gate="agreement.kappa", status="pass", success=True, observed=math.nan, expected=">= 0")
    zero = GateRecord(gate="agreement.kappa", status="fail", success=False, observed=0.0, expected=">= 0.5")
    assert gate_line("validation.json", unmeasurable).observed.startswith("n/a")
    assert gate_line("validation.json", zero).observed == "0.0" and gate_line("validation.json", zero).measure == 0


def test_a_systems_cloze_answers_drawn_against_the_gold(
    releases: Callable[[str, str], Path], browser: WebDriver, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CliCR answers in the JSON ``clincorp score clicr`` reads: an answer equal but for case is a match (SQuAD's
    normalisation), another answer differs, an unanswered query is the gold's only; each row names its query."""
    release = releases("clicr", "full")
    queries = list(rows(release, "clicr", ["id", "document_id", "answers"]))
    case = next(
        c for c in sorted({q["document_id"] for q in queries}) if sum(q["document_id"] == c for q in queries) >= 3
    )
    first, second, third, *_ = [q for q in queries if q["document_id"] == case]
    gold = [next(a["text"] for a in q["answers"] if a["origin_name"] == "dataset") for q in (first, second)]
    predictions = tmp_path / "answers.json"
    predictions.write_text(json.dumps({first["id"]: gold[0].upper(), second["id"]: "aspirin"}), encoding="utf-8")
    browser.get(documents(browser, view_with(release, tmp_path / "view", predictions))[case])
    compared = {row[0]: row for row in table_rows(browser, "#annotators tr.overlay-row") if row[0] == "query"}
    verdicts = {row[3].split(":")[0]: row[-1] for row in table_rows(browser, "#annotators tr.overlay-row")}
    assert compared and verdicts[f"1. {first['id']}"] == "match" and verdicts[f"2. {second['id']}"] == "label differs"
    assert verdicts[f"3. {third['id']}"] == "label differs"  # answered by nobody: the system's "(no answer)"
    tags = [tag.get_attribute("textContent") for tag in browser.find_elements(By.CSS_SELECTOR, ".compared .tag")]
    assert "gold: answer 2" in tags, tags
    predictions.write_text(json.dumps({"no-such-query": "x"}), encoding="utf-8")
    assert main(["view", str(release), "--out", str(tmp_path / "v2"), "--predictions", str(predictions)]) == 1
    assert "no-such-query" in capsys.readouterr().err


def test_a_systems_sdoh_events_drawn_against_the_gold(
    releases: Callable[[str, str], Path], browser: WebDriver, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """sdoh events in the BRAT folder ``clincorp score sdoh`` reads (the release exported, then one subtype changed
    and one event left out): the changed argument differs, the event left out is the gold's only, the rest match;
    a document the release does not hold is an error naming it."""
    release = releases("sdoh", "full")
    predictions = tmp_path / "predicted"
    assert main(["export", "brat", str(release), "--out", str(predictions)]) == 0
    capsys.readouterr()
    ann = predictions / "train" / "mimic" / "0101.ann"
    lines = ann.read_text(encoding="utf-8").splitlines()
    lines = [
        re.sub(r"^(A\d+\tStatusTimeVal T2) current$", r"\1 past", line) for line in lines if not line.startswith("E5\t")
    ]
    ann.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pages = documents(browser, view_with(release, tmp_path / "view", predictions))
    browser.get(pages["train/mimic/0101"])
    tally = browser.find_element(By.CSS_SELECTOR, "#annotators p.muted").text
    assert "label differs: 1" in tally and "only gold: 3" in tally and "only system" not in tally, tally  # E5: 2 spans
    compared = [tag.text for tag in browser.find_elements(By.CSS_SELECTOR, ".compared .tag.v-label")]
    assert sorted(compared) == ["gold: LivingStatus + Status: current", "system: LivingStatus + Status: past"]
    browser.get(pages["train/mimic/0102"])
    assert "only" not in browser.find_element(By.CSS_SELECTOR, "#annotators p.muted").text
    assert not [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    (predictions / "train" / "mimic" / "9999.ann").write_text("", encoding="utf-8")
    assert main(["view", str(release), "--out", str(tmp_path / "v2"), "--predictions", str(predictions)]) == 1
    assert "holds 1 document(s) the release does not: train/mimic/9999" in capsys.readouterr().err


def test_a_systems_odie_chains_drawn_against_the_gold(
    releases: Callable[[str, str], Path], browser: WebDriver, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """odie_anaphora chains in the CoNLL-2012 response ``clincorp score coref RELEASE RESPONSE`` reads: the
    release's own conll2012 export matches the gold everywhere; the exact-string baseline's response links some
    markables otherwise; a response whose tokens are not the export's, or a text-free release, is an error."""
    release = releases("odie_anaphora", "full")
    assert main(["export", "conll2012", str(release), "--out", str(tmp_path / "gold")]) == 0
    assert main(["baseline", "odie_anaphora", str(release), "--name", "exact-string", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    gold = documents(browser, view_with(release, tmp_path / "view-gold", tmp_path / "gold" / "train.conll"))
    browser.get(gold["mayo_cc_01"])
    tally = browser.find_element(By.CSS_SELECTOR, "#annotators p.muted").text
    assert tally.startswith("match: ") and "only" not in tally and "differs" not in tally, tally
    system = documents(browser, view_with(release, tmp_path / "view-system", tmp_path / "train.conll"))
    browser.get(system["mayo_cc_01"])
    differing = [tag.text for tag in browser.find_elements(By.CSS_SELECTOR, ".compared .tag.v-label")]
    assert "system: new entity" in differing and "gold: no chain" in differing  # "neck weakness", twice
    chains = [row for row in table_rows(browser, "#annotators tr.overlay-row") if row[0] == "chain"]
    assert {row[-1] for row in chains} == {"only gold", "only system"}
    response = (tmp_path / "train.conll").read_text(encoding="utf-8").splitlines()
    cut = next(number for number, line in enumerate(response) if line and not line.startswith("#"))
    (tmp_path / "cut.conll").write_text("\n".join(response[:cut] + response[cut + 1 :]) + "\n", encoding="utf-8")
    assert main(["view", str(release), "--out", str(tmp_path / "v2"), "--predictions", str(tmp_path / "cut.conll")])
    assert "a response keeps the export's tokens" in capsys.readouterr().err
    text_free = ["view", str(releases("odie_anaphora", "text-free")), "--out", str(tmp_path / "v3")]
    assert main([*text_free, "--predictions", str(tmp_path / "train.conll")]) == 1
    assert "a text-free release holds no text to place CoNLL-2012 tokens on" in capsys.readouterr().err

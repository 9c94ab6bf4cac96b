"""Protected health information in a string: the HIPAA Safe Harbor categories a release's strings may carry
(dates, ages over 89, phone and fax numbers, email and web addresses, IP addresses, social security, medical
record and account numbers, ZIP codes and street addresses, person names), found by pattern, with
de-identification placeholders recognised and left alone.

Our own patterns, not a library's: Presidio's pattern recognisers (presidio-analyzer 2.2) import spaCy on import,
its email and URL recognisers fetch the public suffix list over the network, it took about 3 ms a string for four
recognisers and flagged ``#123-456`` ids as phone numbers; Philter (philter-ucsf 1.0, 2020) runs on text files
with its own configuration and no API for a string. A gate over every string of a release must run offline and
cost about what reading the strings costs, so candidates are first picked out of a column in one RE2 pass
(:data:`CANDIDATE`, through pyarrow: every category's pattern and a name's shape) and only those are read here.

Placeholders are not findings: MIMIC-III's ``[** ... **]`` (Johnson et al. 2016), MIMIC-IV-Note's ``___``
(Johnson et al. 2023) and i2b2's ``**NAME[...]``-style tags (Uzuner et al. 2007) are masked before matching.
Person names are found by :mod:`~clinical_corpora.validation.phi_person`.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal, get_args

from clinical_corpora.validation.phi_person import NAME_SHAPE, name_found

Category = Literal[
    "date",
    "age",
    "phone",
    "email",
    "url",
    "ip_address",
    "ssn",
    "record_number",
    "zip_code",
    "address",
    "name",
    "figure_text",
]
CATEGORIES: tuple[Category, ...] = get_args(Category)
"""Every category a finding may be of (``figure_text``: a PNG figure's text chunk that is not the card's own)."""

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_STREET = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Circle|"
    r"Highway|Hwy|Parkway|Pkwy|Square|Sq)"
)
_PATTERNS: dict[Category, str] = {
    "date": (
        r"\b\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})\b|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{4}/\d{1,2}/\d{1,2}\b"
        rf"|\b{_MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}\b|\b\d{{1,2}}(?:st|nd|rd|th)? {_MONTH}\.?,? \d{{4}}\b"
    ),
    "age": (r"(?i:\b(?:9\d|1[0-4]\d)[- ]?(?:y/?o|yrs?(?:[- ]old)?|years?[- ]old)\b|\bage[ds]?:? (?:9\d|1[0-4]\d)\b)"),
    "phone": r"(?:\+1[ .-]?)?(?:\(\d{3}\) ?|\b\d{3}[ .-])\d{3}[.-]\d{4}\b",
    "email": r"\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b",
    "url": r"(?i:\b(?:https?|ftp)://[^\s\"'<>)\]]+|\bwww\.[A-Za-z0-9-]+\.[A-Za-z]{2,}\S*)",
    "ip_address": r"\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b",
    "ssn": r"\b\d{3}-\d{2}-\d{4}\b|(?i:\b(?:SSN|social security(?: number| no\.?)?)\s*[:#]?\s*\d{9}\b)",
    "record_number": (
        r"(?i:\b(?:MRN|MR#|med(?:ical)? rec(?:ord)?(?: number| no\.?| #)?|acct|account(?: number| no\.?| #)?|"
        r"unit no\.?|encounter(?: number| no\.?))\s*[:#]?\s*[A-Z]{0,3}-?\d{4,}\b)"
    ),
    "zip_code": r"\b[A-Z]{2},? \d{5}(?:-\d{4})?\b|\b\d{5}-\d{4}\b|(?i:\bzip(?: code)?:?\s*\d{5}\b)",
    "address": rf"\b\d{{1,5}} (?:[A-Z][a-z]+ ){{1,3}}{_STREET}\b|(?i:\b(?:P\.?O\.? Box|Apt\.?|Suite) #?\d+)",
}
_PATTERN_CATEGORIES: tuple[Category, ...] = tuple(_PATTERNS)
_COMPILED = {category: re.compile(pattern, re.ASCII) for category, pattern in _PATTERNS.items()}
_PLACEHOLDERS = re.compile(r"\[\*\*.*?\*\*\]|_{3,}|\*\*[A-Z][A-Z-]*(?:\[[^\]]*\])?")
PATTERN_CANDIDATE = "|".join(f"(?:{pattern})" for pattern in _PATTERNS.values())
"""An RE2 pattern (ASCII, as the patterns are compiled) every string holding a finding of a pattern category
matches."""
CANDIDATE = f"{PATTERN_CANDIDATE}|{NAME_SHAPE}"
"""An RE2 pattern every string holding a finding matches: each category's pattern, and for names their shape (the
lists are looked at after): what the gate reads further."""
PREFILTER = rf"[0-9]|@|://|(?i:www\.)|{NAME_SHAPE}"
"""A cheaper RE2 pattern every string :data:`CANDIDATE` matches holds (a digit, an ``@``, a web address, a name's
shape): run first, it leaves :data:`CANDIDATE` a fraction of a column."""
_PATTERN_CANDIDATE = re.compile(PATTERN_CANDIDATE, re.ASCII)
HASH_LENGTH = 12


def mask_placeholders(text: str) -> str:
    """``text`` with every de-identification placeholder replaced by spaces (offsets kept)."""
    return _PLACEHOLDERS.sub(lambda match: " " * len(match.group()), text)


def phi_found(text: str, public: str = "") -> list[tuple[Category, str]]:
    """Each category found in ``text`` once, with the short hash of its first match (never the match); a match
    that ``public`` (the corpus's own declarations: its citation, homepage, licence) holds is no finding."""
    masked = mask_placeholders(text)
    found: list[tuple[Category, str]] = []
    if _PATTERN_CANDIDATE.search(text) is not None:
        for category in _PATTERN_CATEGORIES:
            match = next((m.group() for m in _COMPILED[category].finditer(masked) if m.group() not in public), None)
            if match is not None:
                found.append((category, short_hash(match)))
    name = name_found(masked)
    if name is not None and name not in public:
        found.append(("name", short_hash(name)))
    return found


def short_hash(text: str) -> str:
    """The first :data:`HASH_LENGTH` hex digits of the sha256 of ``text``: what a finding shows of it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_LENGTH]

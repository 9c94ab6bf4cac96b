"""Person names in a string, found by the shape of a pair of words and the name lists of
:mod:`~clinical_corpora.validation.phi_names`, in any cased script.

A pair is a name when it is written as people write names and its words are in the lists:

- ``Mary Okafor``, ``Mary J. Okafor``, ``Otis van Elst``: two capitalised words, a given name and a surname or a
  word no common English one (pyspellchecker's English dictionary), a surname after a word neither so nor
  one a phrase begins with (``Admission Date`` and ``The Walker`` are none), or two words neither English nor a
  drug's or medical term's (``Oluwaseun Adeyemi``);
- ``Okafor, Mary``: the same after a comma, surname first;
- ``Dr. Okafor``, ``Mrs Okafor``: any capitalised word after a title;
- ``J. Okafor``, ``J.A. Okafor``: initials before a surname;
- ``MARY OKAFOR``, ``mary okafor``, ``mary_okafor``, ``MaryOkafor`` (a heading, an annotator's login, an id): a
  given name and then a surname, or a surname, a comma and a given name.

A hyphenated word (``Smith-Jones``, ``Soo-jin``) is in a list when it or any of its parts is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from clinical_corpora.validation.phi_names import NOT_FIRST, english_words, first_names, surnames, unaccented

_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_CAMEL = re.compile(r"(?:[A-Z][a-z]+){2,3}")
_CAMEL_PART = re.compile(r"[A-Z][a-z]+")
TITLES = frozenset({"dr", "mr", "mrs", "ms", "miss", "mx", "prof", "doctor"})
PARTICLES = frozenset("al bin da de del della der di dos du el ibn la le ten ter van von".split())
"""The lower-case words between a given name and a surname (``Otis van Elst``, ``Felipe de Jesus``)."""
MEDICAL_ENDINGS = tuple(
    """
    azole azine cillin cycline dine done floxacin ide ine mab mide mycin nib olol oma osis pam pine pril profen
    quel sartan semide statin tidine toprol vanc vir xacin xone zepam zolam zosyn ectomy emia itis otomy plasty
    scopy ae ococcus iella ref ora xml csv rrf
    """.split()
)
"""Endings of drugs' and medical terms' names (``Lisinopril``, ``Vancomycin``, ``Pneumoniae``) and of formats: a
pair of such words is no person's name when no list holds either."""
_ELIDED = re.compile(r"^[^\W\d_]['’](?=[^\W\d_]{2})")
"""An elided article before a surname (``O'Brien``, ``D'Amico``)."""
_PARTS = re.compile(r"['’-]")
_VOWEL = re.compile(r"[aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿąęėįųœəαεηιουωаеёиоуыэюяіїє]")
_JOINED = (" ", "_", ".", "-")
"""What stands between a given name and a surname written in one case (``mary_okafor``)."""
NAME_SHAPE = (
    r"[A-Z][a-z]*\.?,? (?:[A-Z]\.? )*[A-Z]|[A-Z]{2,},? [A-Z]{2,}|[a-z]{2,}[ _.-][a-z]{2,}|[A-Z]\.[A-Z]"
    r"|[A-Z][a-z]+[A-Z][a-z]|[^\x00-\x7F]"
)
"""An RE2 pattern every string holding a name matches (the lists are looked at after): the shapes above in ASCII,
or any other character (a name of another script or with an accent; RE2 compiles Unicode classes slowly)."""
Word = tuple[int, int, str]


def name_found(text: str) -> str | None:
    """The first person's name in ``text`` (its words as written), or None."""
    words = [(match.start(), match.end(), match.group()) for match in _WORD.finditer(text)]
    for index, word in enumerate(words):
        for after, gap in _following(words, index, text):
            if _is_name(word, after, gap):
                return text[word[0] : after[1]]
        camel = _camel_name(word[2])
        if camel is not None:
            return camel
    return None


def _following(words: list[Word], index: int, text: str) -> Iterator[tuple[Word, str]]:
    """The word after ``words[index]`` and what stands between them, and the word after a middle initial or a
    surname's particle (``Mary J. Okafor``, ``Otis van Elst``: ``Okafor``, ``Elst``, with a space between)."""
    if index + 1 < len(words):
        middle = words[index + 1]
        yield middle, text[words[index][1] : middle[0]]
        initial = len(middle[2]) == 1 and middle[2].isupper()
        if index + 2 < len(words) and (initial or middle[2] in PARTICLES):
            if text[words[index][1] : middle[0]] == " " and text[middle[1] : words[index + 2][0]] in (". ", " "):
                yield words[index + 2], " "


def _is_name(word: Word, after: Word, gap: str) -> bool:
    """Whether ``word``, ``gap`` and ``after`` are a person's name."""
    first, last = word[2], after[2]
    if _capitalised(first) and _capitalised(last):
        if gap in (" ", ". ") and first.casefold() in TITLES:
            return True
        if gap == " ":
            return _given_and_surname(first, last) or (_unknown(first) and _unknown(last))
        return gap == ", " and _given_and_surname(last, first)
    if len(first) == 1 and first.isupper() and gap in (". ", ".") and _capitalised(last):
        return _listed(last, surnames())
    return _one_case(first, last) and _given_then_surname(first, last, gap)


def _given_and_surname(given: str, surname: str) -> bool:
    """A listed given name and a listed surname or a word no English one; or a listed surname after a word that is
    neither English nor a word a phrase begins with (``Admission Date`` and ``The Walker`` are none)."""
    if _listed(given, first_names()):
        return _listed(surname, surnames()) or not _english(surname, common=True)
    return _listed(surname, surnames()) and given not in NOT_FIRST and not _english(given, common=True)


def _given_then_surname(first: str, last: str, gap: str) -> bool:
    """``mary okafor``, ``MARY_OKAFOR`` or ``okafor, mary``."""
    if gap in _JOINED:
        return _listed(first, first_names()) and _listed(last, surnames())
    return gap == ", " and _listed(first, surnames()) and _listed(last, first_names())


def _camel_name(word: str) -> str | None:
    """``MaryOkafor`` (in an id): a given name joined to a surname."""
    if _CAMEL.fullmatch(word) is None:
        return None
    parts = _CAMEL_PART.findall(word)
    pairs = zip(parts, parts[1:], strict=False)
    return word if any(_given_then_surname(first, last, " ") for first, last in pairs) else None


def _capitalised(word: str) -> bool:
    """``Okafor``, ``McDonald``, ``O'Brien``: an upper-case letter first, a lower-case one after."""
    return len(word) > 1 and word[0].isupper() and any(c.islower() for c in word[1:])


def _one_case(first: str, last: str) -> bool:
    """Two words of two letters or more, both upper-case or both lower-case."""
    if len(first) < 2 or len(last) < 2:
        return False
    return (first.isupper() and last.isupper()) or (first.islower() and last.islower())


def _unknown(word: str) -> bool:
    """Whether ``word`` is written as a name (``Okafor``: capitalised, lower-case after, a vowel) and is no English
    word, nor a drug's or a medical term's (by its ending)."""
    word = _ELIDED.sub("", word)
    folded = word.casefold()
    if not word[1:].islower() or _VOWEL.search(folded) is None or folded.endswith(MEDICAL_ENDINGS):
        return False
    return not _english(word)


def _english(word: str, common: bool = False) -> bool:
    """Whether ``word`` is in the English dictionary, or is a ``common`` word of it (case-folded, accents or
    none)."""
    folded, words = word.casefold(), english_words(common)
    return folded in words or unaccented(folded) in words


def _listed(word: str, names: frozenset[str]) -> bool:
    """Whether ``word``, or a part of it when hyphenated, is in ``names`` (case-folded, accents or none)."""
    folded = word.casefold()
    parts = [folded, *_PARTS.split(folded)]
    return any(part in names or unaccented(part) in names for part in parts)

"""The given names and surnames the PHI gate takes a pair of words for a person's name by: our own list of common
given names of the United States (the Social Security Administration's most frequent names of the 1930s to the
2000s, as we remember them), the US Census Bureau's 1990 first-name and surname frequency lists (public domain;
shipped by the ``names`` package as ``dist.male.first``, ``dist.female.first`` and ``dist.all.last``) and the
given names and surnames of every locale of Faker's person providers (MIT; written in a cased script: Latin,
Cyrillic, Greek, Armenian, Georgian), less the English words clinical text and cards begin or end a capitalised
pair with (:data:`NOT_NAMES`, :data:`NOT_SURNAMES`, Faker's own list of common English words).

Every name is kept case-folded, and also without its accents (``José`` as ``josé`` and ``jose``)."""

from __future__ import annotations

import importlib
import pkgutil
import re
import unicodedata
from collections.abc import Iterable
from functools import cache
from importlib.resources import files

from clinical_corpora.core.errors import ClincorpError

_ONE_WORD = re.compile(r"[^\W\d_]{2,}(?:['’-][^\W\d_]+)*")
CENSUS_LISTS = ("dist.male.first", "dist.female.first")
CENSUS_SURNAMES = "dist.all.last"
MIN_SURNAME_FREQUENCY = 0.001
"""The census surnames of a frequency of 0.001 % or more: the 18,839 most frequent (the rest, 70,000 more, hold
English words a card uses: Face, Card)."""
NOT_FIRST = frozenset(
    """
    A About After All Also An And Any Are As At Be Because Before Both But By Can Could Did Do Does Each Either
    False For From Had Has Have He Her His How If In Into Is It Its May Might Most Must My No None Nor Not Null Of
    On Once One Only Or Other Our Per She Should Since So Some Such Than That The Their Then There These They This
    Those Through To True Under Until Upon Was We Were What When Where Which While Who Whom Whose Why Will With
    Within Would Yes You Your
    """.split()
)
"""Words a capitalised phrase begins with that are no given name: before a census surname (``The Walker``,
``In Hall``) they make no name."""
MIN_FREQUENCY = 0.004
"""The census lists' long tail (frequency 0.004 % and below) holds words as much as names (In, My, See, Else)."""
NOT_NAMES = frozenset(
    """
    Al Art Baby Bo Bud Chance Chase Chi Christian Coy Dell Do Drew Early Else Faith General Grant Guy Hope Hunter
    Ima Ina Junior King Lane Long Love Ma Mac Major May Mi Miles Page Precious Prince Rich Royal Son Sonny Sterling
    Summer Sun Sunny Van Will Wm Young
    """.split()
)
"""Census first names that are English words (or abbreviations) a label, heading or sentence starts with."""

OWN_FIRST_NAMES = frozenset(
    """
    Aaron Abigail Adam Adrian Adrienne Agnes Aidan Aiden Alan Albert Alberto Alec Alejandro Alex Alexa Alexander
    Alexandra Alexis Alfred Alfredo Alice Alicia Alison Allen Allison Alma Alvin Alyssa Amanda Amber Amelia Amy
    Ana Andre Andrea Andres Andrew Angel Angela Angelica Angelina Angie Anita Ann Anna Anne Annette Annie Anthony
    Antonio April Arlene Armando Arnold Arthur Ashley Audrey Austin Ava Barbara Barry Beatrice Becky Belinda Ben
    Benjamin Bernadette Bernard Bernice Bert Beth Bethany Betty Beverly Bill Billy Blake Bob Bobby Bonnie Brad
    Bradley Brandi Brandon Brenda Brent Brett Brian Bridget Brittany Brooke Bruce Bryan Caleb Calvin Cameron
    Camila Carl Carla Carlos Carmen Carol Caroline Carolyn Carrie Casey Cassandra Catherine Cathy Cecil Cecilia
    Chad Charlene Charles Charlie Charlotte Chelsea Cheryl Chester Chloe Chris Christian Christina Christine
    Christopher Cindy Claire Clara Clarence Claude Claudia Clifford Clinton Clyde Cody Colleen Connie Connor
    Constance Corey Courtney Craig Crystal Curtis Cynthia Daisy Dale Dan Dana Daniel Danielle Danny Darlene
    Darrell Darren Dave David Dawn Dean Deanna Debbie Deborah Debra Delores Denise Dennis Derek Derrick Diana
    Diane Dianne Dolores Dominic Don Donald Donna Dora Doris Dorothy Douglas Duane Dustin Dwayne Dwight Dylan Earl
    Eddie Edgar Edith Edna Eduardo Edward Edwin Eileen Elaine Eleanor Elena Eli Elijah Elizabeth Ella Ellen Elsie
    Emily Emma Emmanuel Enrique Eric Erica Erik Erin Ernest Esther Ethan Ethel Eugene Eva Evan Evelyn Faith
    Felicia Felix Fernando Florence Frances Francis Francisco Frank Franklin Fred Freddie Frederick Gabriel
    Gabriela Gabriella Gail Gary Gavin Gene Geneva Geoffrey George Georgia Gerald Geraldine Gertrude Gilbert
    Gina Gladys Glen Glenda Glenn Gloria Gordon Grace Greg Gregory Gwendolyn Hailey Haley Hannah Harold Harry
    Harvey Hazel Heather Hector Heidi Helen Henry Herbert Herman Hilda Holly Howard Hunter Ian Ida Irene Iris
    Isaac Isabel Isabella Isaiah Ivan Jack Jackie Jackson Jacob Jacqueline Jaime Jake James Jamie Jan Jane Janet
    Janice Jared Jasmine Jason Javier Jay Jean Jeanette Jeanne Jeff Jeffery Jeffrey Jenna Jennifer Jenny Jeremiah
    Jeremy Jerome Jerry Jesse Jessica Jessie Jesus Jill Jim Jimmy Jo Joan Joann Joanne Joe Joel Johanna John
    Johnny Jon Jonathan Jordan Jorge Jose Joseph Josephine Joshua Joy Joyce Juan Juanita Judith Judy Julia Julian
    Julie Julio June Justin Kaitlyn Karen Karl Kate Katherine Kathleen Kathryn Kathy Katie Katrina Kay Kayla
    Keith Kelly Kelsey Ken Kenneth Kerry Kevin Kim Kimberly Kirk Kristen Kristin Kristina Kurt Kyle Lance Larry
    Laura Lauren Laurie Lawrence Leah Lee Leon Leonard Leroy Leslie Lester Levi Lewis Lillian Lily Linda Lindsay
    Lindsey Lisa Lloyd Logan Lois Lonnie Lorraine Louis Louise Lucas Lucille Lucy Luis Luke Lydia Lynn Madeline
    Madison Maggie Manuel Marcia Marcus Margaret Maria Marian Marie Marilyn Mario Marion Marjorie Mark Marlene
    Marsha Martha Martin Marvin Mary Mason Matthew Maureen Maurice Max Maxine Megan Melanie Melinda Melissa
    Melvin Mia Michael Micheal Michele Michelle Miguel Mike Mildred Milton Minnie Miranda Misty Mitchell Molly
    Monica Morgan Muriel Myrtle Nancy Naomi Natalie Nathan Nathaniel Neil Nelson Nicholas Nicole Nina Noah Noel
    Nora Norma Norman Olga Olivia Oscar Owen Paige Pamela Patricia Patrick Patsy Paul Paula Pauline Pearl Pedro
    Peggy Penny Peter Philip Phillip Phyllis Priscilla Rachel Rafael Ralph Ramon Randall Randy Raul Ray Raymond
    Rebecca Regina Reginald Renee Rhonda Ricardo Richard Rick Ricky Riley Rita Robert Roberta Roberto Robin
    Rodney Roger Roland Ron Ronald Ronnie Rosa Rose Rosemary Ross Roxanne Roy Ruben Ruby Russell Ruth Ryan
    Sabrina Sadie Sally Salvador Sam Samantha Samuel Sandra Sara Sarah Savannah Scott Sean Sergio Seth Shane
    Shannon Sharon Shawn Sheila Shelby Shelley Sherri Sherry Shirley Sidney Sofia Sonia Sophia Stacey Stacy
    Stanley Stella Stephanie Stephen Steve Steven Sue Susan Suzanne Sydney Sylvia Tamara Tammy Tanya Tara Ted
    Teresa Terrance Terry Thelma Theodore Theresa Thomas Tiffany Tim Timothy Tina Todd Tom Tommy Toni Tony Tracey
    Traci Tracy Travis Trevor Troy Tyler Valerie Vanessa Vernon Veronica Vicki Vickie Victor Victoria Vincent
    Viola Violet Virgil Virginia Vivian Wade Walter Wanda Warren Wayne Wendy Wesley Willard William Willie Wilma
    Yolanda Yvonne Zachary Zoe
    """.split()
)


NOT_SURNAMES = frozenset(
    """
    Ball Banks Best Black Brown Bush Card Case Chase Church Cross Current Daily Day Doctor East English Field Fields
    Files French Friend German Glass Green Gross Hill House Job King Law Little Long Love Major May Mills Nurse North
    Numbers Page Parks Person Power Powers Price Rice Rich Rose Sample Short Small Son South Stone Strong Sweet West
    White Work Young
    """.split()
)
"""Census surnames that are English words a label or heading ends with (``Data Fields``, ``Dataset Card``): only
after a first name of the lists do they make a name."""


@cache
def first_names() -> frozenset[str]:
    """Our list, the census lists' and Faker's given names (case-folded: ``mary``) less :data:`NOT_NAMES` and
    common English words."""
    census = {name for listed in CENSUS_LISTS for name in _census(listed, MIN_FREQUENCY)}
    named = OWN_FIRST_NAMES | census | _faker_names()[0]
    return _folded(named) - _folded(NOT_NAMES | _english_words())


@cache
def surnames() -> frozenset[str]:
    """The census surnames of a frequency of :data:`MIN_SURNAME_FREQUENCY` percent or more and Faker's surnames
    (case-folded) less :data:`NOT_SURNAMES` and common English words."""
    census = _census(CENSUS_SURNAMES, MIN_SURNAME_FREQUENCY, inclusive=True)
    return _folded(census | _faker_names()[1]) - _folded(NOT_SURNAMES | _english_words())


def _folded(names: Iterable[str]) -> frozenset[str]:
    """Each name case-folded, and also without its accents."""
    folded = {name.casefold() for name in names}
    return frozenset(folded | {unaccented(name) for name in folded})


def unaccented(word: str) -> str:
    """``word`` without combining accents (``josé``: ``jose``)."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


@cache
def _faker_names() -> tuple[frozenset[str], frozenset[str]]:
    """The given names and the surnames of every locale of Faker's person providers, those written as one word
    of a cased script (``O'Brien`` and ``Soo-jin`` are one word)."""
    try:
        import faker.providers.person as person
    except ModuleNotFoundError as error:
        raise ClincorpError(f"the PHI gate's name lists need the faker package ({error})") from None
    given: set[str] = set()
    family: set[str] = set()
    for locale in pkgutil.iter_modules(person.__path__):
        provider = importlib.import_module(f"{person.__name__}.{locale.name}").Provider
        for listed in ("first_names", "first_names_male", "first_names_female", "first_names_nonbinary"):
            given |= _one_word(getattr(provider, listed, ()))
        family |= _one_word(getattr(provider, "last_names", ()))
    return frozenset(given), frozenset(family)


def _one_word(names: object) -> set[str]:
    """The names of a Faker list (a tuple, or a dict of weights) that are one capitalised word."""
    listed = names if isinstance(names, tuple | list | dict) else ()
    return {name for name in listed if isinstance(name, str) and _ONE_WORD.fullmatch(name) and name[0].isupper()}


COMMON_COUNT = 200
"""How often a word is counted in pyspellchecker's English dictionary for it to be a common English word
(``infarction`` 204, ``gemma`` 192, ``garza`` 94): a listed name beside one is no name."""


@cache
def english_words(common: bool = False) -> frozenset[str]:
    """Every word of pyspellchecker's English dictionary (case-folded; built from subtitles and word lists, it
    holds many given names and surnames too), or its ``common`` ones: a pair of words neither of which is English
    is a name."""
    try:
        from spellchecker import SpellChecker
    except ModuleNotFoundError as error:
        raise ClincorpError(f"the PHI gate's English words need the pyspellchecker package ({error})") from None
    counts = SpellChecker(language="en", distance=1).word_frequency.dictionary
    return frozenset(word for word, count in counts.items() if not common or count >= COMMON_COUNT)


@cache
def _english_words() -> frozenset[str]:
    """Faker's list of common English words (``ability``, ``able``, ``about``), capitalised."""
    from faker.providers.lorem.en_US import Provider

    return frozenset(word.capitalize() for word in Provider.word_list)


def _census(name: str, threshold: float, inclusive: bool = False) -> set[str]:
    """The names of a census list (lines ``MARY  2.629  2.629  1``: name, frequency %, cumulative %, rank) over
    ``threshold`` percent (or at it, ``inclusive``), capitalised."""
    try:
        text = files("names").joinpath(name).read_text(encoding="ascii")
    except (ModuleNotFoundError, OSError) as error:
        raise ClincorpError(f"the PHI gate's name list {name} of the names package cannot be read ({error})") from None
    rows = [line.split() for line in text.splitlines()]
    return {
        row[0].capitalize()
        for row in rows
        if len(row) == 4 and (float(row[1]) >= threshold if inclusive else float(row[1]) > threshold)
    }

"""A country goes by several names: its own, its other spellings and its people's adjective ("United States",
"United States of America", "American"). A passage that says one of them supports an answer that says
another: "the country of citizenship of the actor" answered "United States" from "an American film actor" is
grounded (llm/grounding.py), where word matching alone finds neither "united" nor "states" in the passage.

The names come from countryinfo's data (MIT; about 250 countries and territories), read once. ISO codes ("US",
"AGO", "CAN") and names in other scripts are left out: as words they would match English text ("us", "ago", "can").
An adjective several share ("American": the United States and the Northern Mariana Islands; "French": France and its
territories) names the most populous of them only.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence

from longqa.retrieval.bm25 import bm25_tokens

Form = tuple[str, ...]  # one name as BM25 terms, in order


@functools.cache
def country_forms() -> tuple[tuple[Form, ...], ...]:
    """Each country's names as term sequences (name, other spellings, demonym), one tuple per country."""
    from countryinfo import all_countries  # its data files are read on first use, not at import

    countries = sorted(all_countries(), key=lambda c: -(c.population() or 0))
    adjectives_taken: set[Form] = set()
    forms_of = []
    for country in countries:
        names = [country.name(), *(n for n in country.alt_spellings() or [] if not _is_code(n))]
        forms = {tuple(bm25_tokens(n)) for n in names if n.isascii()}
        adjective = tuple(bm25_tokens(country.demonym() or ""))
        if adjective and adjective not in adjectives_taken:  # the most populous country keeps it
            adjectives_taken.add(adjective)
            forms.add(adjective)
        forms.discard(())
        if forms:
            forms_of.append(tuple(sorted(forms)))
    return tuple(forms_of)


def _is_code(name: str) -> bool:
    """An ISO code ("US", "AGO", "CAN"): as a lower-case word it is often an English one ("ago", "can")."""
    return name.isupper() and len(name) <= 3


@functools.cache
def _by_first_term() -> dict[str, list[tuple[Form, int]]]:
    index: dict[str, list[tuple[Form, int]]] = defaultdict(list)
    for country, forms in enumerate(country_forms()):
        for form in forms:
            index[form[0]].append((form, country))
    return dict(index)


def country_words(terms: Sequence[str]) -> set[str]:
    """The terms of every name of each country the text (its BM25 terms, in order) names by one of them, the
    name's terms in a row: "american" gives "unit", "state", "america" and "american"."""
    index, forms_of = _by_first_term(), country_forms()
    named = {
        country
        for i, term in enumerate(terms)
        for form, country in index.get(term, ())
        if tuple(terms[i : i + len(form)]) == form
    }
    return {term for country in named for form in forms_of[country] for term in form}

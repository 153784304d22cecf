"""The BM25 index of tool selection: each tool read once (its name, description,
examples, parameter names and descriptions) into weights over the terms of
`selection_words`, so that scoring a message is a few dictionary look-ups per term.
`function_calls.selection` ranks and chooses the tools with it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass

from groupmate.function_calls.registry import Tool
from groupmate.function_calls.selection_words import is_weak, normalized, terms, verb_kind

# Field weights: a word in a tool's name says most about it, its examples next (they
# are what users say), its description, then its parameters.
_NAME, _EXAMPLE, _DESCRIPTION, _PARAMETER = 3.0, 2.0, 1.0, 0.5
_K1, _B = 1.2, 0.6
_WEAK = 1.0  # a weak term's share of a match ("show", "today")
_HISTORY_CAP = 0.5  # at most what the earlier chat adds to a tool the message matched, of its score
_MIN_COLLECTION = 50


def tool_family(name: str) -> str:
    """`reminder` of reminder_snooze, `git` of git__status: tools that go together."""
    if "__" in name:
        return name.split("__", 1)[0]
    return name.split("_", 1)[0]


def _tool_text(tool: Tool) -> Iterable[tuple[str, float]]:
    yield tool.name, _NAME
    yield tool.description, _DESCRIPTION
    for example in tool.examples:
        yield example.said, _EXAMPLE
    properties = tool.parameters.get("properties")
    if isinstance(properties, Mapping):
        for name, schema in properties.items():
            yield str(name), _PARAMETER
            if isinstance(schema, Mapping) and isinstance(schema.get("description"), str):
                yield schema["description"], _PARAMETER


@dataclass(frozen=True, slots=True)
class Match:
    score: float  # with what the earlier chat leans
    matched: tuple[str, ...]
    strong: bool
    said: bool = True  # the message's own words matched (not only the earlier chat's)
    own: float = 0.0  # the message's own words' share of `score`


class ToolIndex:
    """A BM25 index over a fixed list of tools; each (term, tool) weight is worked out
    here, so ranking a message is a few dictionary look-ups per term. Also each tool's
    examples as written, which a message that says one exactly matches at once."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = tuple(tools)
        self.verbs = tuple(verb_kind(tool.name) for tool in self.tools)
        self.family_of = tuple(tool_family(tool.name) for tool in self.tools)
        self.families: dict[str, list[int]] = {}
        for position, family in enumerate(self.family_of):
            self.families.setdefault(family, []).append(position)
        self.examples: dict[str, list[int]] = {}
        for position, tool in enumerate(self.tools):
            for example in tool.examples:
                said = normalized(example.said)
                if said:
                    self.examples.setdefault(said, []).append(position)
        docs: list[dict[str, float]] = []
        for tool in self.tools:
            weights: dict[str, float] = {}
            for text, weight in _tool_text(tool):
                for term in terms(text):
                    weights[term] = weights.get(term, 0.0) + weight
            docs.append(weights)
        # Weighed as if among at least _MIN_COLLECTION tools: in a bot with three tools,
        # a word all three share still says something, and scores keep one scale
        # (the small-talk threshold means the same with 3 tools as with 300).
        count = max(len(docs), _MIN_COLLECTION)
        average = sum(sum(d.values()) for d in docs) / max(len(docs), 1) or 1.0
        frequency: Counter[str] = Counter()  # documents per term
        for doc in docs:
            frequency.update(doc.keys())
        # (tool, weight, what the term adds to the match's strength: see `_scored`).
        self._postings: dict[str, list[tuple[int, float, int]]] = {}
        for position, doc in enumerate(docs):
            length = sum(doc.values())
            norm = _K1 * (1 - _B + _B * length / average)
            # The name's head ("book" of book, "weather" of weather_now), its words that
            # are no weak ones ("now" of weather_now is a weak word), and the verb a
            # description starts with ("Count one more of a word"): what the tool does.
            tool = self.tools[position]
            in_name = list(terms(tool.name))
            # (Only its very first word: "The group's trip…" starts with no verb.)
            verb = next(terms(tool.description.split(" ", 1)[0]), None)
            named = {term for term in in_name if not is_weak(term)} | set(in_name[:1])
            if verb is not None and not verb.startswith("@"):
                named.add(verb)
            for term, tf in doc.items():
                idf = math.log(1 + (count - frequency[term] + 0.5) / (frequency[term] + 0.5))
                weight = idf * tf * (_K1 + 1) / (tf + norm)
                gain = _strength(term, in_name=term in named)
                self._postings.setdefault(term, []).append((position, weight, gain))

    def match(
        self, said: Mapping[str, float], before: Mapping[str, float], *, follow_up: bool
    ) -> dict[int, Match]:
        """Tool position -> its score for the message's terms `said` and the earlier
        chat's `before` (term -> weight), the terms it matched, and whether the match is
        a strong one. The earlier chat only leans a tool the message itself matched (by
        at most `_HISTORY_CAP` of the message's own score), unless the message is a
        follow-up ("and in Paris?"), which the earlier chat chooses for as much."""
        own, own_terms, own_strength = self._scored(said)
        # Only a follow-up is chosen for by tools the message itself did not match.
        earlier, earlier_terms, earlier_strength = self._scored(
            before, among=None if follow_up else own.keys()
        )
        found: dict[int, Match] = {}
        for position in own.keys() | earlier.keys():
            mine, then = own.get(position, 0.0), earlier.get(position, 0.0)
            strength = own_strength.get(position, 0)
            if follow_up:
                score, strength = mine + then, strength + earlier_strength.get(position, 0)
            else:
                score = mine + min(then, mine * _HISTORY_CAP)
            terms_matched = (*own_terms.get(position, ()), *earlier_terms.get(position, ()))
            found[position] = Match(score, terms_matched, strength >= 2, position in own, mine)
        return found

    def _scored(
        self, query: Mapping[str, float], among: Set[int] | None = None
    ) -> tuple[dict[int, float], dict[int, list[str]], dict[int, int]]:
        """Each tool's score for `query`, the terms it matched, and its strength (the
        sum of `_strength` of the terms it matched)."""
        scores: dict[int, float] = {}
        matched: dict[int, list[str]] = {}
        strength: dict[int, int] = {}
        for term, weight in query.items():
            factor = weight * (_WEAK if is_weak(term) else 1.0)
            for position, value, gain in self._postings.get(term, ()):
                if among is not None and position not in among:
                    continue
                scores[position] = scores.get(position, 0.0) + value * factor
                matched.setdefault(position, []).append(term)
                if gain:
                    strength[position] = strength.get(position, 0) + gain
        return scores, matched, strength


def _strength(term: str, *, in_name: bool) -> int:
    """What a term adds to a match's strength (2 make a match strong): a concept is a
    request's meaning, and so is a word of the tool's name (a name is chosen with care)
    (2); one plain word shared with a description ("day", "group") is not, two are (1
    each); a weak term counts none."""
    concept = term.startswith("@")
    named = in_name and not concept
    if named:
        return 2
    if is_weak(term):
        return 0
    return 2 if concept else 1

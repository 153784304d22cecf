"""Per-message tool selection: the model is offered the tools this message needs, chosen
from everything the sender may use here, within a token budget.

Every tool shown costs every request its tokens, and the tool list grows with each
family, plugin and MCP server while a small model's window stays at 4k–8k tokens. A
small model also chooses better among five relevant tools than among sixty. So:

- `ToolIndex` (in `tool_index`) reads each tool once (its name, description, examples,
  parameter names and descriptions) into a BM25 index over the terms of
  `selection_words` (English stems, Chinese pieces, and the concepts both languages
  share). It is built once per tool set (`ToolSelector` keeps the last few), never per
  message.
- `ToolSelector.select` ranks the sender's tools for the message, adds what the chat's
  recent lines and its recent tool use point at ("and snooze it 10 minutes" after a
  reminder), and offers the best, within `budget` tokens. A message that matches no tool
  (greetings, thanks, general questions) is offered none.
- The model can still reach the rest: `FIND_TOOLS` is offered beside a partial list, and
  a call of a tool the sender may use but was not shown still runs (the invoker checks
  visibility, never the selection: selection is relevance, not permission).

Deterministic: the same tools, message and history give the same offer.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from groupmate.function_calls.registry import Tool, build_tool
from groupmate.function_calls.selection_words import (
    is_follow_up,
    is_piece,
    is_question,
    normalized,
    terms,
)
from groupmate.function_calls.tool_index import Match, ToolIndex, tool_family

_HISTORY = 0.35  # the recent lines' share
_PIECE = 0.6  # a two-character piece of Chinese text's share
_CONCEPT = 1.0  # a concept's share: what the words mean, beside the words themselves
_HISTORY_LINES = 4
_RECENT_TOOL = 2.0  # a tool this chat used lately
_EXAMPLE_SAID = 10.0  # the message is one of the tool's examples, word for word
_ASKED = {"read": 1.25, "write": 0.8}  # a question's lean, by the verb of a tool's name
_RECENT_FAMILY = 0.8  # a tool of the same family ("reminder_…", "git__…")
_RELATIVE_CUTOFF = 0.2  # offered: at least this share of the best score
# Below this best score a message is taken as needing no tool (small talk): one common
# word shared with a description ("day", "how") is no request.
_MIN_SCORE = 2.5
DEFAULT_MAX_TOOLS = 8
_INDEXES = 8
_RECENT_CHATS = 10_000
_RECENT_PER_CHAT = 4


class FindToolsArgs(BaseModel):
    """Arguments of the tool finder."""

    model_config = ConfigDict(extra="forbid")

    need: str = Field(
        ...,
        min_length=1,
        max_length=200,
        description="A few words saying what the tool should do, e.g. 'snooze a reminder'",
    )


FIND_TOOLS = "find_tools"
FIND_TOOLS_DESCRIPTION = (
    "Only when none of the other tools can do what the user asked: say in a few words "
    "what is needed, and the matching tools are added for your next call."
)


@dataclass(frozen=True, slots=True)
class Choice:
    """One ranked tool, and what chose it: the words it matched, and whether this chat
    used it (or its family) lately. `why` says it for the dashboard (worked out only
    for the few offered, not for every tool ranked)."""

    tool: Tool
    score: float
    matched: tuple[str, ...] = ()
    lately: Literal["", "tool", "family"] = ""

    @property
    def why(self) -> str:
        reasons = ["words: " + ", ".join(dict.fromkeys(self.matched))] if self.matched else []
        if self.lately == "tool":
            reasons.append("used here lately")
        elif self.lately == "family":
            reasons.append("its family was used here lately")
        return "; ".join(reasons)


@dataclass(frozen=True, slots=True)
class ToolOffer:
    """What one message is offered: the tools best first, why each, and how many the
    sender may use in all."""

    choices: tuple[Choice, ...]
    available: int
    # Some tools the sender may use are not offered (the finder is then worth offering).
    partial: bool

    @property
    def tools(self) -> tuple[Tool, ...]:
        return tuple(choice.tool for choice in self.choices)

    def describe(self) -> list[dict[str, object]]:
        """For the dashboard's model-activity view: each tool, its score and why."""
        return [
            {"tool": c.tool.name, "score": round(c.score, 2), "why": c.why} for c in self.choices
        ]


_Ranked = list[tuple[float, int, tuple[str, ...], Literal["", "tool", "family"]]]


def _ranked(
    index: ToolIndex,
    matches: Mapping[int, Match],
    allowed: Set[int] | None,
    recent: Sequence[str],
    *,
    question: bool,
    leaned: bool,
) -> _Ranked:
    """(score, position, terms matched, lately) of each tool that bears on the message,
    best first. `leaned`: the earlier chat's words and the chat's `recent` tools count;
    else the message's own words alone."""
    families = {tool_family(name) for name in recent}
    # Only the tools something points at are looked at: the words' matches, and the
    # families used here lately (not every tool, at every message).
    looked_at = set(matches).union(*(index.families.get(f, ()) for f in families))
    ranked: _Ranked = []
    for position in looked_at:
        tool = index.tools[position]
        if allowed is not None and id(tool) not in allowed:
            continue
        found = matches.get(position)
        score = 0.0
        matched: tuple[str, ...] = ()
        lately: Literal["", "tool", "family"] = ""
        # After a tool of its family ran here, weak words are enough ("move it to
        # 5pm" after a reminder was set).
        family_used = index.family_of[position] in families
        if found is not None and (found.strong or family_used):
            score, matched = (found.score if leaned else found.own), found.matched
            if question:
                # A question asks to be told: tools that read before tools that write.
                score *= _ASKED.get(index.verbs[position], 1.0)
        if tool.name in recent and found is not None and found.said:
            # Only beside a word of the message: a chat that listed its reminders
            # and then asks the time in Tokyo wants no reminder tool.
            score += _RECENT_TOOL
            lately = "tool"
        elif family_used and score > 0:
            score += _RECENT_FAMILY
            lately = "family"
        if score > 0:
            ranked.append((score, position, matched, lately))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return ranked


def _own(index: ToolIndex, matches: Mapping[int, Match], position: int, question: bool) -> float:
    """What the message's own words score a tool (a question leaning to reading)."""
    found = matches.get(position)
    if found is None:
        return 0.0
    return found.own * (_ASKED.get(index.verbs[position], 1.0) if question else 1.0)


def _best_named(index: ToolIndex, matches: Mapping[int, Match], *, question: bool) -> int | None:
    """The tool the message's own words name best (a strong match), if any."""
    best, best_score = None, 0.0
    for position, found in sorted(matches.items()):
        score = _own(index, matches, position, question)
        if found.strong and found.said and score > best_score:
            best, best_score = position, score
    return best


def _query(text: str, history: Sequence[str]) -> tuple[dict[str, float], dict[str, float]]:
    """The message's terms and the earlier chat's, each with its weight."""
    before: dict[str, float] = {}
    for line in history[-_HISTORY_LINES:]:
        before.update(dict.fromkeys(_line_terms(line), _HISTORY))
    return dict(_message_terms(text)), before


# A chat's last lines come back with each of its messages, and a message is read again
# by the finder and the budget's refits: each text's terms are worked out once.
_TEXTS_KEPT = 4096


@functools.lru_cache(maxsize=_TEXTS_KEPT)
def _line_terms(line: str) -> frozenset[str]:
    # "Name: words": the speaker's name says nothing about the tools.
    said = line.split(": ", 1)[1] if ": " in line else line
    return frozenset(terms(said))


@functools.lru_cache(maxsize=_TEXTS_KEPT)
def _message_terms(text: str) -> tuple[tuple[str, float], ...]:
    weighted = []
    for term, times in Counter(terms(text)).items():
        # A piece of Chinese text is half a word: it counts less than a word or concept.
        kind = _CONCEPT if term.startswith("@") else _PIECE if is_piece(term) else 1.0
        weighted.append((term, min(times, 2) * kind))
    return tuple(weighted)


@dataclass(slots=True)
class _RecentUse:
    """The tools each chat called lately (in this process), newest last."""

    chats: OrderedDict[str, tuple[str, ...]] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, chat_id: str, names: Iterable[str]) -> None:
        with self.lock:
            recent = [n for n in self.chats.pop(chat_id, ()) if n not in names]
            recent.extend(names)
            self.chats[chat_id] = tuple(recent[-_RECENT_PER_CHAT:])
            while len(self.chats) > _RECENT_CHATS:
                self.chats.popitem(last=False)

    def of(self, chat_id: str) -> tuple[str, ...]:
        with self.lock:
            return self.chats.get(chat_id, ())


class ToolSelector:
    """Chooses each message's tools. One per `FunctionCallLLM`; `cost(tool)` is what a
    tool adds to a request, in tokens, in the form the model is shown it."""

    def __init__(self, *, max_tools: int = DEFAULT_MAX_TOOLS) -> None:
        if max_tools < 1:
            raise ValueError("max_tools must be at least 1")
        self.max_tools = max_tools
        self._indexes: OrderedDict[tuple[int, ...], ToolIndex] = OrderedDict()
        # The tuple asked for last, and its index: the bot asks with one tuple per change
        # of its tools (never changed), found again without a key of a thousand ids.
        self._last: tuple[tuple[Tool, ...] | None, ToolIndex | None] = (None, None)
        self._lock = threading.Lock()
        self.recent = _RecentUse()

    def index(self, tools: Sequence[Tool]) -> ToolIndex:
        """The index of `tools`, built once per distinct list."""
        last, last_index = self._last
        if last is tools and last_index is not None:
            return last_index
        key = tuple(id(tool) for tool in tools)
        with self._lock:
            found = self._indexes.get(key)
            # (An id is only unique among live objects: the tools themselves must match.)
            if found is not None and all(a is b for a, b in zip(found.tools, tools, strict=True)):
                self._indexes.move_to_end(key)
            else:
                found = None
        if found is None:
            found = ToolIndex(tools)
            with self._lock:
                self._indexes[key] = found
                while len(self._indexes) > _INDEXES:
                    self._indexes.popitem(last=False)
        if isinstance(tools, tuple):
            self._last = (tools, found)
        return found

    def rank(
        self,
        tools: Sequence[Tool],
        text: str,
        *,
        history: Sequence[str] = (),
        chat_id: str = "",
        universe: Sequence[Tool] | None = None,
    ) -> list[Choice]:
        """The tools of `tools` that bear on `text`, best first (ties in the index's
        order). The index is built over `universe` (every tool the bot has, of which
        `tools` are the sender's), so that one index serves every sender and chat."""
        index = self.index(universe if universe is not None else tools)
        allowed = None if universe is None else {id(tool) for tool in tools}
        # A follow-up ("and in Paris?") is chosen for by the chat's last lines too.
        follow_up = bool(history) and is_follow_up(text)
        said, before = _query(text, history)
        matches = index.match(said, before, follow_up=follow_up)
        for position in index.examples.get(normalized(text), ()):
            found = matches.get(position)
            score = (found.score if found else 0.0) + _EXAMPLE_SAID
            own = (found.own if found else 0.0) + _EXAMPLE_SAID
            matched = (*(found.matched if found else ()), "its example")
            matches[position] = Match(score, matched, True, True, own)
        recent = self.recent.of(chat_id) if chat_id else ()
        question = is_question(text)
        ranked = _ranked(index, matches, allowed, recent, question=question, leaned=True)
        if not follow_up and ranked:
            # The earlier chat and the chat's recent tools may reorder what the message
            # names, never overturn it: a chat that listed its reminders and then asks
            # the time in Tokyo wants the time ("move it to 5pm" after a reminder was
            # set names a reminder best, and stays leaned).
            winner = ranked[0][1]
            named = _best_named(index, matches, question=question)
            if (
                named is not None
                and index.family_of[winner] != index.family_of[named]
                and _own(index, matches, named, question) > _own(index, matches, winner, question)
            ):
                ranked = _ranked(index, matches, allowed, (), question=question, leaned=False)
        return [Choice(index.tools[p], score, m, lately) for score, p, m, lately in ranked]

    def select(
        self,
        tools: Sequence[Tool],
        text: str,
        *,
        budget: int,
        cost: Callable[[Tool], int],
        history: Sequence[str] = (),
        chat_id: str = "",
        universe: Sequence[Tool] | None = None,
    ) -> ToolOffer:
        """The tools to offer for `text`: the best of `rank` within `budget` tokens and
        `max_tools`, and none for a message no tool bears on."""
        ranked = self.rank(tools, text, history=history, chat_id=chat_id, universe=universe)
        chosen: list[Choice] = []
        spent = 0
        best = ranked[0].score if ranked else 0.0
        if best < _MIN_SCORE:
            ranked = []
        for choice in ranked:
            if len(chosen) >= self.max_tools or choice.score < best * _RELATIVE_CUTOFF:
                break
            price = cost(choice.tool)
            if spent + price > budget:
                continue  # a smaller one further down may still fit
            chosen.append(choice)
            spent += price
        return ToolOffer(tuple(chosen), len(tools), partial=len(chosen) < len(tools))

    def remember(self, chat_id: str, names: Iterable[str]) -> None:
        """The tools a turn in `chat_id` ran, which the chat's next messages lean to."""
        names = [name for name in names if name != FIND_TOOLS]
        if names:
            self.recent.add(chat_id, names)


@functools.cache
def finder_tool() -> Tool:
    """The tool finder as the model is shown it (the turn answers its calls itself)."""

    async def find_tools(args: FindToolsArgs) -> None:
        raise RuntimeError("the tool finder is answered by the turn")

    return build_tool(
        find_tools, name=FIND_TOOLS, description=FIND_TOOLS_DESCRIPTION, effect="read"
    )

"""What a request shows of the tools: which ones a message is offered, what showing each
costs, their `tools=[...]` list (native mode) and the system prompt that describes them
(prompt mode). See FunctionCallLLM and `function_calls.selection`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from groupmate.function_calls import _transport as transport
from groupmate.function_calls.context_window import text_tokens, tools_tokens
from groupmate.function_calls.prompt_formats import (
    PromptFormat,
    WorkedExample,
    render_tool_instructions,
    tool_text,
)
from groupmate.function_calls.registry import Tool
from groupmate.function_calls.schema import SchemaView
from groupmate.function_calls.selection import FIND_TOOLS, ToolSelector, finder_tool
from groupmate.function_calls.selection_words import has_chinese
from groupmate.function_calls.system_prompt import build_system_prompt
from groupmate.function_calls.toolsets import ToolListing
from groupmate.function_calls.turn import CallMode, Turn

# Costs kept, one per tool, mode and view; past this many they are worked out again.
_COSTS_KEPT = 4096
# Worked examples shown per tool in prompt mode (reminder_set has six: 300 tokens).
_WORKED_PER_TOOL = 3
# Tool lists kept built (one per set of tools offered, and schema view).
_TOOL_LISTS = 256


@dataclass(frozen=True, slots=True)
class _BuiltTools:
    tools: tuple[Tool, ...]  # kept so that the ids in its key stay theirs
    listed: transport.ToolList


def worked_examples(tool: Tool, *, chinese: bool) -> list[WorkedExample]:
    """The tool's examples that prompt mode shows as calls: at most _WORKED_PER_TOOL,
    those in the message's language (Chinese or not) first, then in the author's order.
    A small model copies the nearest example; more of one tool's cost the tools beside it
    their place in the budget."""
    worked = [
        WorkedExample(example.said, tool.name, example.arguments)
        for example in tool.examples
        if example.arguments is not None
    ]
    worked.sort(key=lambda example: has_chinese(example.said) != chinese)  # stable
    return worked[:_WORKED_PER_TOOL]


class Offering:
    """Chooses each message's tools within a budget, and knows what each costs.

    `universe` gives the listing of every tool the bot has now (for no context): the
    selector's index is built over it once per change, whichever sender asks. The same
    listing object means nothing changed (see `ListingMemo`)."""

    def __init__(
        self,
        selector: ToolSelector,
        *,
        strict: bool,
        prompt_format: PromptFormat,
        universe: Callable[[], ToolListing],
    ) -> None:
        self.selector = selector
        self._strict = strict
        self._format = prompt_format
        self._everyone = universe
        self._universe: tuple[ToolListing | None, tuple[Tool, ...]] = (None, ())
        self._costs: dict[tuple[int, CallMode, SchemaView, bool], int] = {}
        self._tool_lists: dict[tuple[tuple[int, ...], SchemaView], _BuiltTools] = {}

    def universe(self) -> tuple[Tool, ...]:
        """Every tool the model may be shown, to anyone: one tuple per change of them."""
        listing = self._everyone()
        kept, tools = self._universe
        if kept is not listing:
            tools = tuple(tool for tool in listing.offered.values() if tool.for_model)
            self._universe = (listing, tools)
        return tools

    def cost(self, tool: Tool, mode: CallMode, view: SchemaView, *, chinese: bool = False) -> int:
        """What showing `tool` adds to a request, in estimated tokens (in prompt mode
        with the worked examples for a message in Chinese or not)."""
        key = (id(tool), mode, view, chinese and mode == "prompt")
        found = self._costs.get(key)
        if found is None:
            if mode == "native":
                found = tools_tokens([tool.definition(strict=self._strict, view=view)])
            else:
                definition = tool.definition(strict=False, view=view, worked_apart=True)
                worked = worked_examples(tool, chinese=chinese)
                found = text_tokens(tool_text(definition, self._format, worked))
            if len(self._costs) >= _COSTS_KEPT:
                self._costs.clear()
            self._costs[key] = found
        return found

    def all_tools(self, tools: Sequence[Tool], mode: CallMode, view: SchemaView) -> int:
        """What showing every one of `tools` would add."""
        return sum(self.cost(tool, mode, view) for tool in tools if tool.for_model)

    def offer(self, turn: Turn, text: str, *, budget: int) -> None:
        """Set `turn.tools` (and `turn.offer`, why) to what `text` is offered within
        `budget` tokens, with the finder beside a partial guess."""
        candidates = [tool for tool in turn.available.values() if tool.for_model]
        finder = finder_tool()
        chinese = has_chinese(text)
        offer = self.selector.select(
            candidates,
            text,
            budget=budget - self.cost(finder, turn.mode, turn.view),
            cost=lambda tool: self.cost(tool, turn.mode, turn.view, chinese=chinese),
            history=turn.history,
            chat_id=turn.ctx.chat_id,
            universe=self.universe(),
        )
        turn.offer = offer
        turn.tools = {tool.name: tool for tool in offer.tools}
        # The way out when the guess was wrong: only beside a guess (small talk is
        # offered nothing), and only where some tools were left out.
        if offer.choices and offer.partial and FIND_TOOLS not in turn.available:
            turn.tools[FIND_TOOLS] = finder

    def finder(self, turn: Turn) -> Callable[[str], list[Tool]]:
        """The tool finder's search over what the sender of `turn` may use."""

        def find(need: str) -> list[Tool]:
            candidates = [tool for tool in turn.available.values() if tool.for_model]
            ranked = self.selector.rank(candidates, need, universe=self.universe())
            return [choice.tool for choice in ranked[: self.selector.max_tools]]

        return find

    def tool_list(self, tools: tuple[Tool, ...], view: SchemaView) -> transport.ToolList:
        """The `tools=[...]` of a request, built once per tool set (the same few sets
        come back message after message; the list is never changed once sent)."""
        key = (tuple(id(tool) for tool in tools), view)
        cached = self._tool_lists.get(key)
        if cached is not None and all(a is b for a, b in zip(cached.tools, tools, strict=True)):
            return cached.listed
        definitions = [tool.definition(strict=self._strict, view=view) for tool in tools]
        if len(self._tool_lists) >= _TOOL_LISTS:
            self._tool_lists.clear()
        built = _BuiltTools(tools, transport.ToolList.of(definitions))
        self._tool_lists[key] = built
        return built.listed

    def system_prompt(self, turn: Turn, persona: str) -> str:
        """The system prompt, with the offered tools described in prompt mode."""
        instructions = ""
        if turn.mode == "prompt" and turn.tools:
            tools = turn.tools.values()
            definitions = [
                tool.definition(strict=False, view=turn.view, worked_apart=True) for tool in tools
            ]
            chinese = has_chinese(turn.asked)
            worked = [e for tool in tools for e in worked_examples(tool, chinese=chinese)]
            instructions = render_tool_instructions(definitions, self._format, worked)
        return build_system_prompt(persona=persona, tool_instructions=instructions)

    def system_message(self, turn: Turn, persona: str) -> str:
        """The system message's text: in prompt mode the context line comes last."""
        system = self.system_prompt(turn, persona)
        return f"{system}\n\n{turn.context_line}" if turn.mode == "prompt" else system

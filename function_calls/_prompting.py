"""What a turn shows the model: the system prompt, the earlier chat as a transcript, the
message, and the tools it is offered, all fitted into the window; and the same turn shown
anew in prompt mode when the endpoint rejects native tools. FunctionCallLLM sends it."""

from __future__ import annotations

from collections.abc import Sequence

from groupmate.function_calls import _shaping as shaping
from groupmate.function_calls import _transport as transport
from groupmate.function_calls._offering import Offering
from groupmate.function_calls._shaping import ChatTurn, Message
from groupmate.function_calls._window import PromptBudget, Window
from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.context_window import ContextOverflowError, fit, text_tokens
from groupmate.function_calls.errors import LLMUnavailableError
from groupmate.function_calls.prompt_formats import PromptFormat, frame_text
from groupmate.function_calls.registry import Tool
from groupmate.function_calls.schema import SchemaView
from groupmate.function_calls.system_prompt import build_context
from groupmate.function_calls.turn import CallMode, Turn
from groupmate.function_calls.vocabulary import ToolSchema

# Under this window (in tokens), `tool_schema: auto` shows native mode the compact view.
_COMPACT_BELOW = 8192


class Prompting:
    """The messages and tools of each request of a turn, within `window`."""

    def __init__(
        self,
        *,
        window: Window,
        offering: Offering,
        persona: str,
        prompt_format: PromptFormat,
        tool_schema: ToolSchema,
    ) -> None:
        self.window = window
        self.offering = offering
        self.persona = persona
        self.prompt_format: PromptFormat = prompt_format
        self.tool_schema: ToolSchema = tool_schema

    def view(self, mode: CallMode) -> SchemaView:
        """The schema view a turn's tools are shown (and validated) in. `auto`: compact in
        prompt mode, and in native mode under a small window. A small window means a small
        model, which the compact view was made for, and a tight budget, in which the full
        `reminder_set` (about 690 tokens, 370 compact) crowds out the tools beside it."""
        if self.tool_schema == "auto":
            small = self.window.window.tokens < _COMPACT_BELOW
            return "compact" if mode == "prompt" or small else "full"
        return self.tool_schema

    def begin(self, turn: Turn, text: str, history: Sequence[ChatTurn]) -> None:
        """The turn's first messages: the system prompt, and the chat with `text` last;
        and the tools this message is offered."""
        turn.context_line = build_context(turn.ctx)
        # The volatile context goes last in the system prompt, after everything stable,
        # where the prefix cache still keeps all before it. Not in native mode: chat
        # templates put the tools after the system text, and it would come before them.
        turn.latest = text if turn.mode == "prompt" else f"{text}\n\n{turn.context_line}"
        turn.asked = text
        # The earlier chat goes in as a transcript, not as past user and assistant turns:
        # a model shown its own earlier "⏰ Reminder #2 set" answers (to slash commands)
        # imitated them, and claimed in text what it should have done with a tool. The
        # latest message is as it was written: a 1.5B model answered "Alice: hi" with a
        # tool call, and "hi" with "Hello!", and anything after "hi" (even the context
        # line) made it call the summary tool.
        turn.history = [shaping.transcript_line(item) for item in history]
        self._offer(turn, text)
        turn.messages.append(self._system(turn))
        turn.messages.append({"role": "user", "content": turn.render(turn.history)})

    def _system(self, turn: Turn, *, context: bool = True) -> Message:
        """The turn's system message (in prompt mode the context line comes last)."""
        offering, persona = self.offering, self.persona
        text = (
            offering.system_message(turn, persona)
            if context
            else offering.system_prompt(turn, persona)
        )
        return {"role": "system", "content": text}

    def tools_changed(self, turn: Turn) -> None:
        """The turn's tools changed: in prompt mode the system prompt describes them."""
        if turn.mode == "prompt":
            turn.messages[0] = self._system(turn)

    def _offer(self, turn: Turn, text: str) -> None:
        """Choose the tools `text` is offered: the budget is what the window leaves after
        the system prompt, the message and room for the earlier chat."""
        # The call format's explanation comes with the tools in prompt mode.
        frame = text_tokens(frame_text(self.prompt_format)) if turn.mode == "prompt" else 0
        base = self.window.minimum(turn.context_line) + text_tokens(text) + frame
        history = sum(text_tokens(line) for line in turn.history)
        budget = self.window.tool_budget(base=base, frame=frame, history=history)
        self.offering.offer(turn, text, budget=budget)

    def budget(self, tools: Sequence[Tool], ctx: MessageContext, mode: CallMode) -> PromptBudget:
        """How the window is spent on `tools` for a short message in `ctx`, in `mode`."""
        every = self.offering.all_tools(tools, mode, self.view(mode))
        shown = sum(1 for tool in tools if tool.for_model)
        return self.window.budget(context_line=build_context(ctx), all_tools=every, tools=shown)

    def fitted(self, turn: Turn) -> transport.ToolList | None:
        """Fit the turn's request into the window: the oldest chat goes first, then long
        tool results are cut, then the least relevant tools not yet used. Raises
        LLMUnavailableError with the plain sentence when even that does not fit."""
        while True:
            tools = None
            if turn.mode == "native" and turn.tools:
                tools = self.offering.tool_list(tuple(turn.tools.values()), turn.view)
            try:
                # Room for the answer is kept; what is dropped stays dropped for the turn.
                fit(
                    turn.messages,
                    tools.definitions if tools is not None else None,
                    history=turn.history,
                    render=turn.render,
                    limit=self.window.limit(),
                    tools_size=tools.tokens if tools is not None else None,
                )
                return tools
            except ContextOverflowError as exc:
                used = {record.name for record in turn.records}
                spare = [name for name in reversed(turn.tools) if name not in used]
                if not spare:
                    raise LLMUnavailableError(self.window.overflow(turn, exc)) from None
                del turn.tools[spare[0]]
                self.tools_changed(turn)

    def to_prompt_mode(self, turn: Turn) -> None:
        """Show the turn anew in prompt mode (the endpoint rejected native tools)."""
        turn.mode = "prompt"
        turn.view = self.view("prompt")
        if turn.warm_up:
            turn.tools.clear()  # its one tool only asked the question just answered
        # The context line is already in the latest message (native mode put it there).
        turn.messages[0] = self._system(turn, context=False)

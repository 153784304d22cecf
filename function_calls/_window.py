"""The window a model's requests are fitted to: where its size came from, how the
server counts tokens, what the bot learned from a refusal, how much of it the tools a
message is offered may take, and what the user and the operator are told when nothing
fits (see FunctionCallLLM)."""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass

from groupmate.function_calls.context_window import ContextOverflowError, text_tokens
from groupmate.function_calls.internal_text import MESSAGE_TOO_LONG, MISCONFIGURED, UNFINISHED
from groupmate.function_calls.server_info import ContextWindow
from groupmate.function_calls.system_prompt import build_system_prompt
from groupmate.function_calls.turn import Turn
from groupmate.function_calls.usage import Usage

log = logging.getLogger("groupmate.llm")

# What the estimate may fill of the window: it counted 10 % below a real tokenizer at
# worst (measured against Qwen2.5's: see docs/design/evaluation.md). A server that
# reports its own count of our requests sets the margin by that instead.
_ESTIMATE_SHARE = 0.88
_MAX_SHARE = 0.97
# Requests smaller than this teach nothing of the server's count (its chat template's
# own tokens weigh too much in them); the latest this many counts are kept.
_COUNTED_FROM = 300
_COUNTS_KEPT = 20
# After a server refused a request as too long without saying its window, the window is
# taken as this share of what was assumed (the estimate was low for this server).
_SHRINK = 0.8
_SMALLEST = 1024
# Of the window left after the system prompt and the message, at most this much is kept
# for the earlier chat before tools are chosen (at least _MIN_HISTORY tokens): what a
# follow-up needs ("and snooze it"), without starving the tools.
_HISTORY_SHARE = 0.25
_MIN_HISTORY = 256
# At most this share of the window (less the answer's room) goes to the tools offered
# and, in prompt mode, their call format (in a 4,096-token window, about 1,000 tokens:
# five to eight tools of the usual size).
_TOOL_SHARE = 0.32
_SHORT_MESSAGE = "hi"


@dataclass(frozen=True, slots=True)
class PromptBudget:
    """How a model's window is spent, for `groupmate check` and the log: what the bot's
    own instructions take, what every tool would take, and what is left for the tools a
    message is offered."""

    window: ContextWindow
    answer: int  # kept for the answer (llm.max_output_tokens)
    minimal: int  # the system prompt without tools, and the context line
    all_tools: int  # what showing every tool would add
    tools: int  # how many tools the model could be shown
    tool_budget: int  # left for a short message's tools, before any history

    @property
    def fits(self) -> bool:
        """Whether a short message fits at all."""
        return self.tool_budget >= 0

    def describe(self) -> str:
        return (
            f"prompt: {self.minimal} tokens without tools, {self.minimal + self.all_tools} "
            f"with all {self.tools} tools; {self.answer} kept for the answer; each message "
            f"is offered the tools it needs within {max(self.tool_budget, 0)} tokens"
        )


class Window:
    """One model's window, as the bot knows it now."""

    def __init__(self, window: ContextWindow, *, answer: int, persona: str) -> None:
        self.window = window
        self.answer = answer  # tokens kept for the answer (max_tokens)
        self.persona = persona
        # The bare system prompt is the same for every message: counted once.
        self._system = text_tokens(build_system_prompt(persona=persona))
        # Set when even a minimal request does not fit: what the operator must change
        # (the log, /healthz and `groupmate check` say it; the user gets one sentence).
        self.problem: str | None = None
        # The server's own count per estimated token, of the latest requests it reported.
        self._counts: deque[float] = deque(maxlen=_COUNTS_KEPT)

    def limit(self) -> int:
        """Tokens a request may take, as `estimate_tokens` counts them: the window less a
        margin for the estimate, less room for the answer."""
        counted = max(self._counts, default=self.window.counted)
        share = _ESTIMATE_SHARE if counted is None else min(_MAX_SHARE, 0.95 / max(counted, 0.5))
        return int(self.window.tokens * share) - self.answer

    def count(self, estimated: int, usage: Usage) -> None:
        """Learn how the server counts from what it reported for a request of
        `estimated` tokens (the most it counted of late sets the margin)."""
        if usage.estimated_requests or estimated < _COUNTED_FROM or usage.prompt_tokens <= 0:
            return
        self._counts.append(usage.prompt_tokens / estimated)

    def learn(self, said: int) -> bool:
        """A server refused a request as too long: take the window it named (or, when it
        named none or one no smaller than assumed, less than assumed), for the rest of
        this process. False when there is nothing smaller to try."""
        assumed = self.window.tokens
        if assumed <= _SMALLEST:
            return False
        counted = self.window.counted
        if 0 < said < assumed:
            learned = ContextWindow(said, "said by the server when it refused a request", counted)
        else:
            shrunk = max(int(assumed * _SHRINK), _SMALLEST)
            learned = ContextWindow(shrunk, "lowered after the server refused a request", counted)
        log.warning(
            "LLM context window: the server refused a request as too long; %d tokens from "
            "now on (was %d, %s). Set llm.context_tokens to what the server was started "
            "with to skip this",
            learned.tokens,
            assumed,
            self.window.source,
        )
        self.window = learned
        return True

    def minimum(self, context_line: str) -> int:
        """What every request takes: the system prompt without tools, and the context."""
        return self._system + text_tokens(context_line)

    def tool_budget(self, *, base: int, frame: int, history: int) -> int:
        """Tokens for the tools a message is offered, after `base` (the system prompt,
        the context, the message and `frame`, prompt mode's call format) and room for
        `history` tokens of earlier chat: a share of the window, so that a small one
        keeps room for the chat and the tool rounds; never what the history needs."""
        free = self.limit() - base
        return min(
            int(self.limit() * _TOOL_SHARE) - frame,
            free - min(history, max(int(free * _HISTORY_SHARE), _MIN_HISTORY)),
        )

    def budget(self, *, context_line: str, all_tools: int, tools: int) -> PromptBudget:
        """How the window is spent for a short message, with `all_tools` tokens of
        `tools` tools to choose from."""
        minimal = self.minimum(context_line)
        left = self.limit() - minimal - text_tokens(_SHORT_MESSAGE)
        return PromptBudget(self.window, self.answer, minimal, all_tools, tools, left)

    def overflow(self, turn: Turn, exc: ContextOverflowError) -> str:
        """The sentence for a request that does not fit even bare: the user's message is
        too long only when the bot's own minimum fits and the message does not."""
        minimum = self.minimum(turn.context_line)
        limit = self.limit()
        if minimum + text_tokens(_SHORT_MESSAGE) > limit:
            problem = (
                f"the model's context window is {self.window.tokens} tokens "
                f"({self.window.source}); less {self.answer} kept for the answer "
                f"(llm.max_output_tokens), {limit} are left, and the system prompt alone "
                f"takes about {minimum}. Start the server with a larger window (and set "
                "llm.context_tokens to it), lower llm.max_output_tokens, or shorten "
                "llm.persona"
            )
            if problem != self.problem:
                log.error("LLM misconfigured: %s", problem)
            self.problem = problem
            return turn.say(MISCONFIGURED)
        if minimum + text_tokens(turn.asked) > limit:
            return turn.say(MESSAGE_TOO_LONG)
        log.warning(
            "chat %s: the turn's tool rounds outgrew the context window (%s)",
            turn.ctx.chat_id,
            exc,
        )
        return turn.say(UNFINISHED)

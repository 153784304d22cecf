"""Slash commands that work without an LLM: the parse table.

Each command builds the tool's raw arguments and calls the tool from chat
(`bot.tool_calls`: the invoker's path, exactly like a call the model made, with its
failures in words).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from groupmate.bot.command_fields import CommandWordsError
from groupmate.bot.command_words import (
    COMMAND_ALIASES,
    COMMAND_USAGE,
    DECLARED_ALIASES,
    GLUED_ALIASES,
    SETTINGS,
    remind_arguments,
    setting_value,
    usage_error,
    within,
)
from groupmate.bot.edit_words import AmbiguousEdit, edit_arguments
from groupmate.bot.help_text import ABOUT, NEEDS_MODEL, closest_commands, first_sentence, help_text
from groupmate.bot.help_text import Command as HelpCommand
from groupmate.bot.tool_calls import NOT_HERE, ChatTools, CommandError
from groupmate.bot.tool_commands import ToolCommand, tool_commands
from groupmate.function_calls import MessageContext, ToolInvoker
from groupmate.function_calls.grammar import GrammarError, parse_duration
from groupmate.function_calls.handlers.budget import MAX_LIMIT
from groupmate.function_calls.handlers.help import plain_examples
from groupmate.function_calls.handlers.reminder_refusals import refusal_text
from groupmate.function_calls.handlers.reminder_snooze import MAX_SNOOZE_MINUTES
from groupmate.function_calls.language import Lang, PlainSentence, language_of
from groupmate.function_calls.links import PageFetcher, find_links
from groupmate.function_calls.registry import Tool
from groupmate.function_calls.search import WebSearch
from groupmate.function_calls.selection import ToolSelector
from groupmate.storage import StorageError, StorageUnavailableError

CommandRunner = Callable[[MessageContext, str], Awaitable[str]]


_PAID = frozenset({"summary", "search", "read", "catchup"})


def unavailable_sentence(command: str, plugin: str) -> PlainSentence:
    """What a command of a plugin that failed to load answers: that it is unavailable,
    whose it is, and where an admin sees why (never the reason itself: it is for
    admins, and may name the config)."""
    return PlainSentence(
        f"/{command} is unavailable right now: the {plugin} plugin failed to load. "
        "An admin can see why in the dashboard (or `groupmate check`).",
        f"/{command} 暂时不可用：{plugin} 插件没有加载成功。"
        "管理员可以在控制面板（或用 `groupmate check`）查看原因。",
    )


class Commands:
    """Parses `/command args` and runs the matching tool."""

    def __init__(
        self,
        invoker: ToolInvoker,
        *,
        model: bool = False,
        unavailable: Mapping[str, str] | None = None,
    ) -> None:
        """`unavailable`: the commands of plugins that failed to load, with each one's
        plugin: answered with that, not as words the bot does not know."""
        self._invoker = invoker
        self.tools = ChatTools(invoker)
        self._model = model  # a model reads plain language here
        self._selector = ToolSelector()  # without one, what plain words are nearest
        self._table: dict[str, CommandRunner] = {
            "remind": self._remind,
            "提醒": self._remind,
            "reminders": self._simple("reminder_list"),
            "cancel": self._cancel,
            "edit": self._edit,
            "snooze": self._snooze,
            "done": self._done,
            "完成": self._done,
            "metoo": self._me_too,
            "pause": self._ref_command("reminder_pause", "pause"),
            "resume": self._ref_command("reminder_resume", "resume"),
            "history": self._history,
            "summary": self._summary,
            "search": self._search,
            "read": self._read,
            "tz": self._tz,
            "settings": self._settings,
            "help": self._help,
            "帮助": self._help,
            "start": self._help,
            "budget": self._budget,
            "tools": self._tools,
        }
        # Commands the tools declare (`@tool_function(command=...)`), after the built-ins.
        self._declared = tool_commands(invoker.registry, self._table)
        for name, declared in self._declared.items():
            self._table[name] = self._declared_command(declared)
        for alias, name in DECLARED_ALIASES.items():
            if name in self._declared and alias not in self._table:
                self._table[alias] = self._table[name]
        # A name the bot answers otherwise stays that (a failed plugin's /help never
        # shadows the real one).
        self._unavailable = {
            name: plugin for name, plugin in (unavailable or {}).items() if name not in self._table
        }

    @staticmethod
    def split(text: str) -> tuple[str, str] | None:
        """('remind', 'in 5 min tea') for '/remind in 5 min tea'; None for other text."""
        if not text.startswith("/"):
            return None
        for alias in GLUED_ALIASES:
            if text[1:].startswith(alias):
                return alias, text[1 + len(alias) :].strip()
        head, _, rest = text[1:].partition(" ")
        name = head.split("@", 1)[0].lower()  # Telegram style: /remind@groupmate
        return (name, rest.strip()) if name else None

    @staticmethod
    def target(text: str) -> str | None:
        """'otherbot' for '/help@otherbot', None when the command names no bot."""
        head = text[1:].split(" ", 1)[0]
        return head.split("@", 1)[1] if "@" in head else None

    def knows(self, name: str) -> bool:
        return name in self._table or name in self._unavailable

    def names(self) -> list[str]:
        """Every command this bot answers, built-in and declared, in the table's order."""
        return list(self._table)

    def tool_of(self, name: str) -> str | None:
        """The tool `name` runs (a built-in's, or the tool that declared it)."""
        builtin = COMMAND_USAGE.get(COMMAND_ALIASES.get(name, name))
        if builtin is not None:
            return builtin[1]
        declared = self._declared.get(DECLARED_ALIASES.get(name, name))
        return declared.tool.name if declared is not None else None

    @staticmethod
    def needs_model(name: str) -> bool:
        """Commands that call the model or a paid API; they draw on the model's budget."""
        return name in _PAID

    async def run(self, ctx: MessageContext, name: str, rest: str) -> str:
        plugin = self._unavailable.get(name)
        if plugin is not None:
            return unavailable_sentence(name, plugin).for_message(ctx.text)
        builtin = COMMAND_USAGE.get(COMMAND_ALIASES.get(name, name))
        if builtin is not None and not self.tools.has_tool(builtin[1]):
            return NOT_HERE.for_message(ctx.text)
        try:
            return await self._table[name](ctx, rest)
        except CommandError as exc:
            return str(exc)
        except StorageUnavailableError:
            raise  # the router answers that the database is down
        except StorageError as exc:
            return refusal_text(exc, ctx.text)

    def _simple(self, tool_name: str) -> CommandRunner:
        async def run(ctx: MessageContext, rest: str) -> str:
            return await self.tools.call(ctx, tool_name, {})

        return run

    async def _remind(self, ctx: MessageContext, rest: str) -> str:
        raw, default_time = remind_arguments(rest, ctx)
        return await self.tools.set_reminder(ctx, raw, default_time)

    async def _cancel(self, ctx: MessageContext, rest: str) -> str:
        if not rest:
            raise usage_error("cancel", ctx)
        return await self.tools.call(ctx, "reminder_delete", {"reminder_id": rest.split()[0]})

    def _ref_command(self, tool_name: str, verb: str) -> CommandRunner:
        async def run(ctx: MessageContext, rest: str) -> str:
            if not rest:
                raise usage_error(verb, ctx)
            return await self.tools.call(ctx, tool_name, {"reminder_id": rest.split()[0]})

        return run

    async def _done(self, ctx: MessageContext, rest: str) -> str:
        """`/done [#id]`: the replied-to or just-delivered reminder by default."""
        word = rest.strip()
        return await self.tools.call(ctx, "reminder_done", {"reminder_id": word} if word else {})

    async def _me_too(self, ctx: MessageContext, rest: str) -> str:
        """`/metoo [#id] [on|off]`; its setter: `/metoo #id allow|forbid`."""
        words = rest.split()
        raw: dict[str, Any] = {}
        if words and words[0].lstrip("#").isdigit():
            raw["reminder_id"] = words.pop(0)
        switch = {"on": ("on", True), "off": ("on", False), "allow": ("allow", True)}
        switch["forbid"] = ("allow", False)
        if len(words) > 1 or (words and words[0].lower() not in switch):
            raise usage_error("metoo", ctx)
        if words:
            key, value = switch[words[0].lower()]
            raw[key] = value
        return await self.tools.call(ctx, "reminder_me_too", raw)

    async def _history(self, ctx: MessageContext, rest: str) -> str:
        """`/history [N]`, or `/history #4`: one reminder, with who set and changed it."""
        word = rest.strip()
        if word.startswith("#") and word[1:].isascii() and word[1:].isdigit():
            return await self.tools.call(ctx, "reminder_history", {"reminder_id": word})
        if word and not (word.isascii() and word.isdigit()):
            raise usage_error("history", ctx)
        if word:
            within(int(word), 1, 50, "/history shows 1 to 50 entries, e.g. /history 20")
        return await self.tools.call(ctx, "reminder_history", {"limit": int(word)} if word else {})

    async def _snooze(self, ctx: MessageContext, rest: str) -> str:
        """`/snooze [#id] [duration]`: the replied-to or just-delivered reminder by default."""
        words = rest.split()
        raw: dict[str, Any] = {}
        if words and (words[0].startswith("#") or (words[0].isdigit() and len(words) > 1)):
            raw["reminder_id"] = words.pop(0)
        if words:
            minutes = parse_duration(" ".join(words))
            if minutes is None:
                if len(words) == 1 and words[0].isdigit():
                    raise CommandError(
                        f"Reminder #{words[0]} or {words[0]} minutes? "
                        f"Write /snooze #{words[0]} or /snooze {words[0]}m."
                    )
                raise usage_error("snooze", ctx)
            within(minutes, 1, MAX_SNOOZE_MINUTES, "A snooze can be 1 minute to a week.")
            raw["minutes"] = minutes
        return await self.tools.call(ctx, "reminder_snooze", raw)

    async def _edit(self, ctx: MessageContext, rest: str) -> str:
        """`/edit #id <new when and/or content>`: the new when goes to reminder_update in
        the user's words, which it reads against the reminder (a bare "at 10" keeps its
        day or rule)."""
        reference, _, change = rest.partition(" ")
        change = change.strip()
        if not reference or not change:
            raise usage_error("edit", ctx)
        try:
            raw = edit_arguments(reference, change)
        except AmbiguousEdit as exc:
            raise CommandError(exc.question) from None
        except GrammarError as exc:
            raise CommandError(f"I couldn't change that reminder: {exc}") from None
        return await self.tools.call(ctx, "reminder_update", raw)

    async def _summary(self, ctx: MessageContext, rest: str) -> str:
        if rest and not (rest.isascii() and rest.isdigit()):
            raise usage_error("summary", ctx)
        if rest:
            within(int(rest), 1, 2000, "/summary reads the last 1 to 2,000 messages.")
        return await self.tools.call(ctx, "summary", {"last_n": int(rest)} if rest else {})

    async def _search(self, ctx: MessageContext, rest: str) -> str:
        if not ctx.deps.has(WebSearch):
            raise CommandError("Web search is not configured on this bot.")
        if not rest:
            raise usage_error("search", ctx)
        return await self.tools.call(ctx, "web_search", {"query": rest})

    async def _read(self, ctx: MessageContext, rest: str) -> str:
        """`/read <link>`, or `/read` in reply to a message that holds one."""
        if not ctx.deps.has(PageFetcher):
            raise CommandError("Reading links is turned off on this bot (search.fetch).")
        links = find_links(rest) if rest else find_links(ctx.reply_text)
        if rest and not links:
            raise CommandError("I can read only http and https links, e.g. /read https://…")
        if not links:
            raise usage_error("read", ctx)
        return await self.tools.call(ctx, "read_url", {"url": links[0]})

    async def _budget(self, ctx: MessageContext, rest: str) -> str:
        """`/budget` shows today's use; `/budget 200000` sets this chat's daily limit."""
        if not rest:
            return await self.tools.call(ctx, "token_budget", {})
        amount = rest.replace(",", "").replace("_", "").strip()
        if not amount.isdigit():
            raise usage_error("budget", ctx)
        within(
            int(amount), 1000, MAX_LIMIT, f"A chat's budget is 1,000 to {MAX_LIMIT:,} tokens a day."
        )
        return await self.tools.call(ctx, "token_budget", {"tokens_per_day": int(amount)})

    async def _tz(self, ctx: MessageContext, rest: str) -> str:
        if not rest:
            return f"This chat's time zone is {ctx.timezone}. Change it with /tz <zone>."
        return await self.tools.call(ctx, "set_timezone", {"timezone": rest.split()[0]})

    async def _settings(self, ctx: MessageContext, rest: str) -> str:
        """`/settings` shows them all; `/settings remind_others admins followup on` changes
        those named, each through its own tool (which checks the sender may)."""
        words = rest.split()
        if len(words) % 2 or any(key not in SETTINGS for key in words[::2]):
            keys = " ".join(f"[{key} {values}]" for key, (_, values) in SETTINGS.items())
            raise usage_error("settings", ctx, keys=keys)
        pairs = zip(words[::2], words[1::2], strict=True)
        given = {key: setting_value(key, word) for key, word in pairs}
        tools = dict.fromkeys(SETTINGS[key][0] for key in given or SETTINGS)
        if given and not all(self.tools.has_tool(tool) for tool in tools):
            return NOT_HERE.for_message(ctx.text)
        answers = [
            await self.tools.call(
                ctx, tool, {k: v for k, v in given.items() if SETTINGS[k][0] == tool}
            )
            for tool in tools
            if self.tools.has_tool(tool)
        ]
        return "\n".join(answers)

    async def _tools(self, ctx: MessageContext, rest: str) -> str:
        """`/tools` lists this chat's tools; `/tools off web_search [read_url]` and
        `/tools on web_search` switch them (chat admins)."""
        words = rest.split()
        if not words:
            return await self.tools.call(ctx, "chat_tools", {})
        if words[0].lower() not in ("off", "on") or len(words) < 2:
            raise usage_error("tools", ctx)
        return await self.tools.call(ctx, "chat_tools", {words[0].lower(): words[1:]})

    def _declared_command(self, declared: ToolCommand) -> CommandRunner:
        async def run(ctx: MessageContext, rest: str) -> str:
            try:
                raw = declared.arguments(rest, now=ctx.now(), lang=_lang(ctx.text))
            except CommandWordsError as exc:
                raise CommandError(str(exc)) from None
            # The words as written, for a handler that reads them itself (CommandText).
            called = dataclasses.replace(ctx, command_text=rest)
            return await self.tools.call(called, declared.tool.name, raw)

        return run

    async def _help(self, ctx: MessageContext, rest: str) -> str:
        """What works for this sender here (see bot.help_text), from the tools the invoker
        offers them: a command whose tool is off, or not theirs, is left out."""
        offered = self._invoker.offered(ctx)
        lang = _lang(ctx.text)
        commands = self._listed(offered, lang)
        examples = plain_examples(offered, chinese=lang == "zh")
        return help_text(lang, commands, examples, model=self._model)

    def closest(self, ctx: MessageContext, text: str) -> str:
        """Without a model, the answer to plain language: the few commands nearest what
        was asked, ranked as the model's tools are (bot.help_text.closest_commands)."""
        # What the sender could run as a command (command-only tools too: /find).
        offered = self._invoker.offered(dataclasses.replace(ctx, source="command"))
        lang = _lang(text)
        return closest_commands(lang, self._listed(offered, lang), self._selector, offered, text)

    def _listed(self, offered: Sequence[Tool], lang: Lang) -> list[HelpCommand]:
        """The commands whose tool `offered` holds, as /help lists them."""
        names = {tool.name for tool in offered}
        zh = lang == "zh"
        commands = [
            # The usage without its examples: the help gives its own.
            HelpCommand(text.split(" (e.g.", 1)[0], ABOUT[name][zh], tool)
            for name, (text, tool) in COMMAND_USAGE.items()
            if tool in names and name in ABOUT and (self._model or name not in NEEDS_MODEL)
        ]
        commands += [
            HelpCommand(
                c.usage(lang),
                ABOUT[name][zh] if name in ABOUT else first_sentence(c.tool.description),
                c.tool.name,
            )
            for name, c in self._declared.items()
            if c.tool.name in names
        ]
        return commands

    def usage(self) -> str:
        """'Commands: /remind …, /reminders, …': those whose tool this bot has."""
        usage = (text for text, tool in COMMAND_USAGE.values() if self.tools.has_tool(tool))
        return "Commands: " + ", ".join(usage)


def _lang(text: str) -> Lang:
    return language_of(text)

"""The words of the built-in /commands: each one's usage and the tool it runs, their
other names, and the checks of a command's arguments that answer in the user's words."""

from __future__ import annotations

from typing import Any

from groupmate.bot.tool_calls import CommandError
from groupmate.function_calls import MessageContext
from groupmate.function_calls.grammar import GrammarError, parse_reminder
from groupmate.function_calls.handlers.digest_settings import QUIET_WORDS
from groupmate.function_calls.handlers.followup import (
    MAX_SECONDS,
    MIN_SECONDS,
    SECONDS_WORDS,
    SWITCH_WORDS,
)
from groupmate.function_calls.handlers.followup import NAME as FOLLOWUP_TOOL
from groupmate.function_calls.language import PlainSentence, is_chinese
from groupmate.storage.vocabulary import (
    PERMISSIONS,
    QUIET_DIGESTS,
    SETTING_EVERYONE,
    SETTING_FOLLOWUP,
    SETTING_FOLLOWUP_SECONDS,
    SETTING_OTHERS,
    SETTING_QUIET_DIGEST,
    SETTING_WORKDAYS,
    SWITCHES,
)

# Each built-in command's usage, and the tool it runs: a command whose tool this bot lacks
# (its family switched off in `builtins:`) answers NOT_HERE, and /help leaves it out.
COMMAND_USAGE: dict[str, tuple[str, str]] = {
    "remind": ("/remind <when> <what> (e.g. /remind tomorrow at 9 call the dentist, /remind "
               "every monday at 9 send the report, /remind in 10 minutes tea, /remind @bob "
               "friday at 5pm send the slides; /提醒 明天上午9点 开会)", "reminder_set"),
    "reminders": ("/reminders", "reminder_list"),
    "cancel": ("/cancel <id>", "reminder_delete"),
    "edit": ("/edit <id> <when/text>", "reminder_update"),
    "snooze": ("/snooze [id] [10m]", "reminder_snooze"),
    "done": ("/done [id]", "reminder_done"),
    "metoo": ("/metoo [id] [on|off]", "reminder_me_too"),
    "pause": ("/pause <id>", "reminder_pause"),
    "resume": ("/resume <id>", "reminder_resume"),
    "history": ("/history [#id]", "reminder_history"),
    "summary": ("/summary [N]", "summary"),
    "search": ("/search <query>", "web_search"),
    "read": ("/read <link>", "read_url"),
    "tz": ("/tz <zone>", "set_timezone"),
    "settings": ("/settings", "followup_settings"),
    "budget": ("/budget", "token_budget"),
    "tools": ("/tools [off|on <tool>]", "chat_tools"),
    "help": ("/help", "help"),
}  # fmt: skip
COMMAND_ALIASES = {"提醒": "remind", "帮助": "help", "start": "help", "完成": "done"}
REMIND_EXAMPLES = (
    "Try: /remind tomorrow at 9 call the dentist · /remind every monday at 9am send the "
    "report · /remind in 90 minutes stretch · /remind on dec 24 at 6pm dinner"
)
REMIND_EXAMPLES_ZH = "例如：/提醒 明天上午9点 开会 · /提醒 每周一上午9点 周会 · /提醒 10分钟后 喝水"
# Chinese names of commands the built-in tools declare (`@tool_function(command=...)`):
# "/查找 预算" is "/find 预算".
DECLARED_ALIASES = {"查找": "find", "日历": "calendar"}
# Commands whose names are not ASCII may be written without a space: "/提醒明天9点开会".
GLUED_ALIASES = ("提醒", "帮助", "完成", *DECLARED_ALIASES)


_BY_ID = (
    "Usage: /{verb} <id>, with the id shown by /reminders",
    "用法：/{verb} <编号>，编号见 /reminders",
)
# What each built-in command takes, said when it was written otherwise: in the language of
# the message that called it, as every sentence the bot says (function_calls.language).
USAGE: dict[str, PlainSentence] = {
    "remind": PlainSentence(
        "Usage: /remind <when> <what>. " + REMIND_EXAMPLES,
        "用法：/提醒 <时间> <内容>。" + REMIND_EXAMPLES_ZH,
    ),
    **{
        verb: PlainSentence(*(line.format(verb=verb) for line in _BY_ID))
        for verb in ("cancel", "pause", "resume")
    },
    "history": PlainSentence(
        "Usage: /history [N] or /history #id, e.g. /history 20",
        "用法：/history [条数] 或 /history #编号，例如 /history 20",
    ),
    "snooze": PlainSentence(
        "Usage: /snooze [#id] [duration], e.g. /snooze #3 10m",
        "用法：/snooze [#编号] [时长]，例如 /snooze #3 10m",
    ),
    "metoo": PlainSentence(
        "Usage: /metoo [#id] [on|off]; the reminder's setter: /metoo #id allow|forbid",
        "用法：/metoo [#编号] [on|off]；提醒的设置者：/metoo #编号 allow|forbid",  # noqa: RUF001
    ),
    "edit": PlainSentence(
        "Usage: /edit <id> <new when and/or text>, e.g. /edit #3 tomorrow at 10",
        "用法：/edit <编号> <新的时间和/或内容>，例如 /edit #3 明天上午10点",
    ),
    "summary": PlainSentence(
        "Usage: /summary [N], e.g. /summary 200", "用法：/summary [条数]，例如 /summary 200"
    ),
    "search": PlainSentence("Usage: /search <query>", "用法：/search <搜索内容>"),
    "read": PlainSentence(
        "Usage: /read <link> (http or https), or /read in reply to a message with a link",
        "用法：/read <链接>（http 或 https），或在回复一条带链接的消息时写 /read",
    ),
    "budget": PlainSentence(
        "Usage: /budget [tokens per day], e.g. /budget 200000",
        "用法：/budget [每天的 token 数]，例如 /budget 200000",
    ),
    "settings": PlainSentence("Usage: /settings {keys}", "用法：/settings {keys}"),
    "tools": PlainSentence(
        "Usage: /tools, /tools off <tool> or /tools on <tool>",
        "用法：/tools、/tools off <工具> 或 /tools on <工具>",
    ),
}


def usage_error(name: str, ctx: MessageContext, **fields: str) -> CommandError:
    """How to write /`name`, in the language of the message that got it wrong."""
    return CommandError(USAGE[name].for_message(ctx.text).format(**fields))


def remind_arguments(text: str, ctx: MessageContext) -> tuple[dict[str, Any], bool]:
    """`[who] <when> <what>` as reminder_set's raw arguments, and whether the time of day
    is the default one (the reply says so)."""
    if not text.strip():
        raise usage_error("remind", ctx)
    try:
        parsed = parse_reminder(text, ctx.now())
    except GrammarError as exc:
        examples = REMIND_EXAMPLES_ZH if is_chinese(text) else REMIND_EXAMPLES
        raise CommandError(f"I couldn't set that reminder: {exc}\n{examples}") from None
    return parsed.arguments(), parsed.when.default_time


# Each /settings key: the tool that shows and changes it, and the values it takes.
SETTINGS: dict[str, tuple[str, str]] = {
    SETTING_OTHERS: ("reminder_rules", "|".join(PERMISSIONS)),
    SETTING_EVERYONE: ("reminder_rules", "|".join(PERMISSIONS)),
    SETTING_FOLLOWUP: (FOLLOWUP_TOOL, "|".join(SWITCHES)),
    SETTING_FOLLOWUP_SECONDS: (FOLLOWUP_TOOL, "<seconds>"),
    SETTING_QUIET_DIGEST: ("digest_settings", "|".join(QUIET_DIGESTS)),
    SETTING_WORKDAYS: ("set_workdays", "CN|<country>|off"),
}


def setting_value(key: str, word: str) -> object:
    """A /settings value as its tool takes it; the setting's own words when it can't be."""
    if key == SETTING_FOLLOWUP_SECONDS:
        refusal = f"That didn't work: {SECONDS_WORDS}."
        if not word.isdigit():
            raise CommandError(refusal)
        within(int(word), MIN_SECONDS, MAX_SECONDS, refusal)
        return int(word)
    if key == SETTING_FOLLOWUP and word.lower() not in SWITCHES:
        raise CommandError(f"That didn't work: {SWITCH_WORDS}.")
    if key == SETTING_QUIET_DIGEST and word.lower() not in QUIET_DIGESTS:
        raise CommandError(f"That didn't work: {QUIET_WORDS}.")
    return word.lower() if key == SETTING_FOLLOWUP else word


def within(number: int, low: int, high: int, sentence: str) -> None:
    """A command's number in its range, or the sentence that says the range (in words:
    the schema's limit of the argument the user never named would not)."""
    if not low <= number <= high:
        raise CommandError(sentence)

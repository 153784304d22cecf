"""What `/help` says: written for the people in the chat, in their language (English or
Chinese), listing only what works for the asker in this setup. No tool names and none
of the model's instructions: those are the tools' descriptions, meant for the model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from groupmate.function_calls.language import Lang
from groupmate.function_calls.registry import Tool
from groupmate.function_calls.selection import ToolSelector

# What each built-in command is for, as a person would put it.
ABOUT: dict[str, tuple[str, str]] = {
    "remind": ("set a reminder", "设置提醒"),
    "reminders": ("this chat's reminders", "本群的提醒"),
    "cancel": ("cancel a reminder", "取消提醒"),
    "edit": ("change a reminder's time or text", "修改提醒的时间或内容"),
    "snooze": ("remind again later, after one went off", "稍后再提醒一次"),
    "pause": ("pause a repeating reminder", "暂停重复提醒"),
    "resume": ("resume a paused reminder", "恢复暂停的提醒"),
    "done": ("say a reminder that went off is done", "把响过的提醒标为完成"),
    "metoo": ("be reminded too by a group's reminder", "也接收群里的某个提醒"),
    "history": ("what the reminders did lately", "提醒最近的情况"),
    "summary": ("a summary of what was said", "总结聊天内容"),
    "search": ("search the web", "网页搜索"),
    "read": ("read a web page", "读取网页"),
    "tz": ("this chat's time zone", "本群的时区"),
    "settings": ("this chat's settings", "本群的设置"),
    "budget": ("the language model's use today", "今天的语言模型用量"),
    "tools": ("switch what I do here on or off", "开关本群的功能"),
    # Declared by built-in tools (`@tool_function(command=...)`).
    "catchup": ("what you missed since your last message", "你上次发言以来错过的内容"),
    "find": ("find this chat's messages with these words", "查找含这些词的消息"),
    "forget": ("delete your messages from my log", "从记录中删除你的消息"),
    "calendar": ("this chat's reminders in your calendar app", "在日历应用里订阅本群的提醒"),
}
# Commands that only mean something with a model.
NEEDS_MODEL = frozenset({"budget"})
MAX_EXAMPLES = 6
_WORDS: dict[Lang, dict[str, str]] = {
    "en": {
        "head": "Here is what I can do in this chat.",
        "ask": "Ask me in your own words, for example:",
        "offline": "No language model is configured here, so I understand the commands "
        "below, not plain language.",
        "commands": "Commands:",
        "none": "No commands are on in this chat.",
        "try": "Try: {examples}",
        "wall": "I can't understand plain language here: no language model is configured.",
        "closest": "The commands closest to that:",
        "some": "Some commands to try:",
        "all": "All of them: /help",
    },
    "zh": {
        "head": "我在这个群里可以做这些：",
        "ask": "可以直接用自己的话问我，例如：",
        "offline": "这里没有配置语言模型，所以我只懂下面的命令，不懂自然语言。",
        "commands": "命令：",
        "none": "这个群里没有开启的命令。",
        "try": "试试：{examples}",
        "wall": "这里没有配置语言模型，我看不懂自然语言。",
        "closest": "最接近的命令：",
        "some": "可以试试这些命令：",
        "all": "全部命令：/帮助",
    },
}
_OFFLINE_TRY: dict[Lang, tuple[str, ...]] = {
    "en": ("/remind in 10 minutes tea", "/reminders"),
    "zh": ("/提醒 10分钟后 喝水", "/reminders"),
}


@dataclass(frozen=True, slots=True)
class Command:
    """One command as /help lists it: how to write it, and what it is for (empty: the
    usage says it)."""

    usage: str
    about: str = ""
    tool: str = ""  # the tool it runs


def help_text(
    lang: Lang, commands: Sequence[Command], examples: Sequence[str], *, model: bool
) -> str:
    """/help: the plain-language `examples` (only with a model), then the commands."""
    words = _WORDS[lang]
    lines = [words["head"]]
    if model and examples:
        lines += [words["ask"], *(f"• {said}" for said in examples[:MAX_EXAMPLES])]
    if not model:
        lines.append(words["offline"])
    if commands:
        colon = "：" if lang == "zh" else ": "
        lines.append(words["commands"])
        lines += [f"• {c.usage}{colon + c.about if c.about else ''}" for c in commands]
    else:
        lines.append(words["none"])
    if not model and any(c.usage.startswith("/remind ") for c in commands):
        lines.append(words["try"].format(examples=" · ".join(_OFFLINE_TRY[lang])))
    return "\n".join(lines)


def first_sentence(text: str) -> str:
    """A plugin command's description as /help shows it: its first sentence."""
    sentence = text.strip().split(". ", 1)[0]
    return sentence.rstrip(".")


CLOSEST = 4


def closest_commands(
    lang: Lang,
    commands: Sequence[Command],
    selector: ToolSelector,
    offered: Sequence[Tool],
    text: str,
) -> str:
    """Plain language with no model to read it: the `CLOSEST` commands whose tools rank
    best for `text` (as the model would be offered them), or the first few when none
    bears on it; never the whole list, which /help gives."""
    # The tools as they rank for the text, best first: those with a command are what
    # the sender can do instead (a tool whose command is hidden, say /budget, is passed).
    ranked = [choice.tool.name for choice in selector.rank(offered, text) if choice.matched]
    by_tool: dict[str, list[Command]] = {}
    for command in commands:
        by_tool.setdefault(command.tool, []).append(command)
    near = [c for name in ranked for c in by_tool.get(name, [])][:CLOSEST]
    words = _WORDS[lang]
    colon = "：" if lang == "zh" else ": "
    shown = near or list(commands[: CLOSEST - 1])
    lines = [words["wall"], words["closest"] if near else words["some"]]
    lines += [f"• {c.usage}{colon + c.about if c.about else ''}" for c in shown]
    return "\n".join([*lines, words["all"]])

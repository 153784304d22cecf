"""A /command written wrong answers how to write it, in the language of the message that
got it wrong (function_calls.language): English for English, Chinese for Chinese."""

from __future__ import annotations

import pytest

from tests.test_catchup import Clock, make_bot, say

CASES = [
    # (what was said, how the answer starts)
    ("/remind", "Usage: /remind <when> <what>. Try: /remind tomorrow at 9"),
    ("/提醒", "用法：/提醒 <时间> <内容>。例如：/提醒 明天上午9点 开会"),
    ("/summary lots", "Usage: /summary [N], e.g. /summary 200"),
    ("/summary 很多", "用法：/summary [条数]，例如 /summary 200"),
    ("/history lately", "Usage: /history [N] or /history #id"),
    ("/history 最近", "用法：/history [条数] 或 /history #编号"),
    ("/budget plenty", "Usage: /budget [tokens per day]"),
    ("/budget 很多", "用法：/budget [每天的 token 数]"),
    ("/tools maybe web_search", "Usage: /tools, /tools off <tool> or /tools on <tool>"),
    ("/tools 关掉 搜索", "用法：/tools、/tools off <工具> 或 /tools on <工具>"),
    ("/settings colour red", "Usage: /settings [remind_others "),
    ("/settings 颜色 红", "用法：/settings [remind_others "),
]


@pytest.mark.parametrize(("said", "start"), CASES, ids=[said for said, _ in CASES])
async def test_a_commands_usage_is_in_the_language_it_was_written_in(
    database_url: str, said: str, start: str
) -> None:
    clock = Clock()
    async with make_bot(database_url, clock) as bot:
        (answer,) = await say(bot, clock, 0, "Alice", said)
    assert answer.startswith(start), answer

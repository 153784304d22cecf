"""`/forget me` deletes the sender's own messages from this chat's log (and so from
search), `/forget all` a chat admin's whole chat log. Each asks first; the sender's "yes"
within two minutes runs it (`function_calls.confirmations`). The deletion, a write, is
audited by the invoker; the question changes nothing and is not."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from groupmate.function_calls.confirmations import CONFIRM_TTL, Confirmations
from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.reminders import refused
from groupmate.function_calls.internal_text import PlainSentence
from groupmate.function_calls.registry import tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import StorageError
from groupmate.storage.chatlog import ChatLog
from groupmate.storage.search import Forgotten, MessageSearch

NAME = "chat_forget"
_ME = frozenset({"me", "mine", "my messages", "我", "我的"})
_ALL = frozenset({"all", "everything", "everyone", "全部", "所有", "所有人"})
_MINUTES = int(CONFIRM_TTL.total_seconds() // 60)
_USAGE = PlainSentence(
    "Write /forget me (your own messages in this chat) or /forget all (everyone's; "
    "chat admins only).",
    "请写 /forget me（删除你自己在这个群的消息）或 /forget all（删除所有人的，仅限群管理员）。",
)


class ForgetArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    me_or_all: str = Field(
        min_length=1, max_length=20, description="me: your own messages; all: everyone's"
    )
    # Set only by the sender's "yes" to the question (see function_calls.confirmations).
    confirmation: str | None = Field(default=None, max_length=64)


@tool_function(
    name=NAME,
    command="forget",
    for_model=False,  # deleting for good is never the model's idea
    description="Delete your own messages from this chat's log (me), or, for chat admins, "
    "everyone's (all), after a yes.",
)
async def chat_forget(
    ctx: MessageContext,
    args: ForgetArgs,
    search: MessageSearch,
    chatlog: ChatLog,
    confirmations: Confirmations,
) -> FunctionResult:
    said = ctx.text or args.me_or_all
    whose = args.me_or_all.strip().lower()
    if whose not in _ME | _ALL:
        return FunctionResult.refused(_USAGE.for_message(said), "refused", _nothing_deleted())
    everyone = whose in _ALL
    if everyone and not ctx.is_admin:
        return FunctionResult.refused(
            PlainSentence(
                "Only a chat admin can clear this chat's log; /forget me deletes your own "
                "messages.",
                "只有群管理员可以清空这个群的记录；/forget me 可以删除你自己的消息。",  # noqa: RUF001
            ).for_message(said),
            "forbidden",
            _nothing_deleted(),
        )
    try:
        if args.confirmation is None:
            return await _ask(ctx, search, chatlog, confirmations, everyone, said)
        if not confirmations.redeem(ctx.chat_id, ctx.sender_id, args.confirmation):
            return FunctionResult.refused(
                PlainSentence(
                    f"Nothing was deleted: that needs a yes to my question. Write /forget "
                    f"{'all' if everyone else 'me'} again.",
                    f"什么都没有删除：需要先回答我的确认问题。请再写一次 /forget "
                    f"{'all' if everyone else 'me'}。",
                ).for_message(said),
                "refused",
                _nothing_deleted(),
            )
        if everyone:
            gone = await search.forget_chat(ctx.chat_id)
        else:
            gone = await search.forget_sender(ctx.chat_id, ctx.sender_id)
    except StorageError as exc:
        return refused(exc, said, _nothing_deleted())
    return FunctionResult.direct(_done(gone, everyone).for_message(said), data=_data(gone))


async def _ask(
    ctx: MessageContext,
    search: MessageSearch,
    chatlog: ChatLog,
    confirmations: Confirmations,
    everyone: bool,
    said: str,
) -> FunctionResult:
    if everyone:
        count = await chatlog.count(ctx.chat_id)
        what = PlainSentence(f"all {count} messages of this chat", f"这个群的全部 {count} 条消息")
    else:
        count = await search.count_by(ctx.chat_id, ctx.sender_id)
        what = PlainSentence(
            f"the {count} messages you wrote in this chat (and my answers to them)",
            f"你在这个群发的 {count} 条消息（以及我对它们的回答）",
        )
    if count == 0:
        nothing = PlainSentence(
            "There is nothing of yours in this chat's log.", "这个群的记录里没有你的消息。"
        )
        if everyone:
            nothing = PlainSentence("This chat's log is empty.", "这个群的记录是空的。")
        return FunctionResult.direct(nothing.for_message(said), changed=False)
    arguments = {"me_or_all": "all" if everyone else "me"}
    confirmations.ask(ctx.chat_id, ctx.sender_id, NAME, arguments, ctx.clock())
    question = PlainSentence(
        f"🗑️ This deletes {what.english} from my log and from search, for good. Reply yes "
        f"within {_MINUTES} minutes to go ahead.",
        f"🗑️ 这会把{what.chinese}从我的记录和搜索里永久删除。{_MINUTES} 分钟内回复“是”确认。",
    )
    return FunctionResult.direct(
        question.for_message(said), data={"asked": True, "messages": count}, changed=False
    )


def _done(gone: Forgotten, everyone: bool) -> PlainSentence:
    if everyone:
        total = gone.messages + gone.answers
        return PlainSentence(
            f"🗑️ Cleared this chat's log: {total} message(s). /find finds none of them now.",
            f"🗑️ 已清空这个群的记录：{total} 条消息。/find 不会再找到它们。",
        )
    return PlainSentence(
        f"🗑️ Deleted your {gone.messages} message(s) in this chat (and my {gone.answers} "
        "answer(s) to them). /find finds none of them now.",
        f"🗑️ 已删除你在这个群的 {gone.messages} 条消息（以及我对它们的 {gone.answers} 条回答）。"
        "/find 不会再找到它们。",
    )


def _data(gone: Forgotten) -> dict[str, int]:
    return {"messages": gone.messages, "answers": gone.answers}


def _nothing_deleted() -> dict[str, bool]:
    return {"deleted": False}

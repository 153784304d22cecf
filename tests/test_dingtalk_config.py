"""The DingTalk adapter's pieces that need no network: its config section (and the
README's), how a message's mentions are read and written, the id a quote of a robot
message gives, and the HTTP callbacks' used signatures."""

from __future__ import annotations

import re
import time

import pytest
import yaml

from groupmate.bot.adapters.dingtalk_events import (
    as_shown,
    fingerprint,
    incoming,
    parse,
    render_mentions,
)
from groupmate.bot.adapters.dingtalk_http import UsedSignatures
from groupmate.storage import Member
from tests.docs_pages import page
from tests.fake_dingtalk import GROUP, FakeDingTalk


def test_mentions_render_as_dingtalk_ats_and_quotes_match_the_sent_id() -> None:
    people = [Member("dt:bob01", "Bob"), Member("dt:al01", "Al")]
    text, ids = render_mentions("@Bob & @Al: tea, @Alice", people)
    assert (text, ids) == ("@bob01 & @al01: tea, @Alice", ["bob01", "al01"])
    sent_id = fingerprint(GROUP, "@Bob & @Al: tea, @Alice")  # the text as people see it
    seen = {m.user_id: m for m in people}
    assert fingerprint(GROUP, as_shown("@Bob & @Al:  tea, @Alice", seen)) == sent_id
    assert fingerprint(GROUP, as_shown(text, seen)) == sent_id  # a quote with the ids
    assert fingerprint("cidOTHER==", "@Bob & @Al: tea, @Alice") != sent_id


def test_reminders_for_different_people_have_different_ids() -> None:
    alice = fingerprint(GROUP, "⏰ Reminder for @Alice: drink water")
    assert alice != fingerprint(GROUP, "⏰ Reminder for @Bob: drink water")


def _mentions(
    fake: FakeDingTalk, text: str, at: tuple[str, ...], seen: dict[str, Member]
) -> list[Member]:
    message = parse(fake.message(text, at=at))
    assert message is not None
    return list(incoming(message, bot_name="groupmate", seen=seen).mentions)


def test_mentioned_ids_get_names_only_when_they_can_t_be_wrong() -> None:
    fake = FakeDingTalk()  # its payloads only: no server
    # Two unknown ids, two "@Name"s, atUsers in another order than the text: no guess.
    both = _mentions(fake, "@Bob @Carol tea", ("carol01", "bob01"), {})
    assert both == [Member("dt:carol01", "carol01"), Member("dt:bob01", "bob01")]
    # One known, one unknown: the unknown one is the other name, punctuation cut off.
    seen = {"dt:bob01": Member("dt:bob01", "Bob")}
    one = _mentions(fake, "@Bob, @Carol, tea?", ("carol01", "bob01"), seen)
    assert one == [Member("dt:carol01", "Carol"), Member("dt:bob01", "Bob")]


def test_signature_headers_are_taken_once_until_they_expire() -> None:
    used = UsedSignatures()
    now = str(int(time.time() * 1000))
    assert not used.seen(now, "sig")
    used.take(now, "sig")
    assert used.seen(now, "sig") and not used.seen(now, "other")
    old = str(int((time.time() - 2 * 3600) * 1000))
    used.take(old, "ancient")  # out of the window: dropped by the next take
    used.take(now, "next")
    assert not used.seen(old, "ancient") and used.seen(now, "sig")


def test_a_section_without_the_app_secret_is_refused() -> None:
    from groupmate.bot.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as refused:
        parse_config({"adapters": {"dingtalk": {"client_id": "x"}}}, environ={})
    assert "client_secret required" in str(refused.value)


def test_the_readmes_dingtalk_section_is_a_valid_config() -> None:
    from groupmate.bot.adapters import configured
    from groupmate.bot.adapters.base import Adapter
    from groupmate.bot.adapters.dingtalk import DingTalkAdapter
    from groupmate.bot.config import parse_config

    part = page("platforms/dingtalk.md")
    block = re.search(r"```yaml\n(.*?)```", part, re.S)
    assert block is not None
    environ = {"DINGTALK_CLIENT_ID": "ding1", "DINGTALK_CLIENT_SECRET": "s"}
    config = parse_config(yaml.safe_load(block.group(1)), environ=environ)
    [adapter] = configured(config)
    assert isinstance(adapter, DingTalkAdapter) and isinstance(adapter, Adapter)
    assert (adapter.name, adapter.chat_prefix) == ("dingtalk", "dt:")

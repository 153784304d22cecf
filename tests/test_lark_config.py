"""The Lark/Feishu adapter's pure parts: reading a message's text, rendering mentions
(and only those) as Lark's tags, the domains, and its config section, in README too."""

from __future__ import annotations

import json

import pytest

from groupmate.bot.adapters.lark_events import render_text, text_of
from tests.docs_pages import page
from tests.fake_lark import APP_ID


def test_rich_text_reads_as_text_with_its_mentions() -> None:
    post = {"title": "Plan", "content": [[{"tag": "at", "user_id": "@_user_1",
            "user_name": "groupmate"}, {"tag": "text", "text": " remind "},
            {"tag": "at", "user_id": "@_user_2"}, {"tag": "text", "text": " at 5"}]]}  # fmt: skip
    message = {"message_type": "post", "content": json.dumps(post)}
    names = {"@_user_1": "groupmate", "@_user_2": "Bob"}
    assert text_of(message, names) == "Plan\n@groupmate remind @Bob at 5"
    assert text_of({"message_type": "image", "content": "{}"}, names) is None


def test_mentions_render_as_at_tags_and_no_other_text_does() -> None:
    rendered = render_text("@Bob & @Al: <b>tea</b> @Alice", {"@Bob": "ou_b", "@Al": "ou_a"})
    assert json.loads(rendered)["text"] == (
        '<at user_id="ou_b">Bob</at> & <at user_id="ou_a">Al</at>: <b>tea</b> @Alice'
    )
    # A tag in a person's words, a reminder's content or the model's answer notifies
    # no one (`user_id="all"` would be everyone): only the bot's own mentions do.
    typed = 'hey <at user_id="all">all</at> and < AT user_id="ou_x"></at> @Bob'
    text = json.loads(render_text(typed, {"@Bob": "ou_b"}))["text"]
    assert text.count("<at") == 1 and '<at user_id="ou_b">Bob</at>' in text
    assert text.replace("\u200b", "") == typed.replace("@Bob", '<at user_id="ou_b">Bob</at>')


@pytest.mark.parametrize(
    ("overrides", "origin"),
    [({}, "https://open.feishu.cn"), ({"domain": "lark"}, "https://open.larksuite.com"),
     ({"domain": "lark", "api_url": "http://127.0.0.1:9/"}, "http://127.0.0.1:9")],
)  # fmt: skip
def test_feishu_and_lark_domains(overrides: dict[str, str], origin: str) -> None:
    from groupmate.bot.adapters.lark_api import LarkApi
    from groupmate.bot.config import parse_config

    lark = {"app_id": APP_ID, "app_secret": "s", "verification_token": "v"} | overrides
    config = parse_config({"adapters": {"lark": lark}}, environ={})
    assert config.adapters.lark is not None
    assert LarkApi(config.adapters.lark).client.config.domain == origin


@pytest.mark.parametrize(
    ("lark", "said"),
    [
        ({"app_id": APP_ID, "app_secret": "s"}, "verification_token required in webhook mode"),
        ({"app_secret": "s", "mode": "websocket"}, "app_id required in websocket mode"),
        ({"app_id": APP_ID, "app_secret": "s", "mode": "websocket",
          "api_url": "http://lark.example.com/api"}, "adapters.lark.api_url: an origin"),
    ],
)  # fmt: skip
def test_a_section_without_what_its_mode_needs_is_refused(lark: dict[str, str], said: str) -> None:
    from groupmate.bot.adapters import configured
    from groupmate.bot.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as refused:
        configured(parse_config({"adapters": {"lark": lark}}, environ={}))
    assert said in str(refused.value)


def test_the_readmes_lark_section_is_a_valid_config() -> None:
    import re

    import yaml

    from groupmate.bot.adapters import configured
    from groupmate.bot.adapters.base import Adapter
    from groupmate.bot.adapters.lark import LarkAdapter
    from groupmate.bot.config import parse_config

    part = page("platforms/lark.md")
    block = re.search(r"```yaml\n(.*?)```", part, re.S)
    assert block is not None
    environ = {"LARK_APP_ID": "cli_1", "LARK_APP_SECRET": "s",
               "LARK_VERIFICATION_TOKEN": "v", "LARK_ENCRYPT_KEY": "k"}  # fmt: skip
    config = parse_config(yaml.safe_load(block.group(1)), environ=environ)
    [adapter] = configured(config)
    assert isinstance(adapter, LarkAdapter) and isinstance(adapter, Adapter)
    assert (adapter.name, adapter.chat_prefix) == ("lark", "lk:")

"""`search:` in config.yaml: one provider or a list, keys from the environment, and
errors that name the key."""

from __future__ import annotations

from typing import Any

import pytest

from groupmate.bot.config import ConfigError, parse_config
from groupmate.function_calls.search import BraveSearch, ModelSearch, SearxngSearch


def search(section: dict[str, Any], **environ: str) -> Any:
    return parse_config({"search": section}, environ=environ).search


def test_one_provider_with_its_url_and_key_beside_it() -> None:
    settings = search(
        {"provider": "perplexity", "api_key": "${PPLX}", "model": "sonar-pro"}, PPLX="k"
    )
    (only,) = settings.providers
    assert only.label() == "perplexity (https://api.perplexity.ai)"
    provider = only.provider(5)
    assert isinstance(provider, ModelSearch) and provider.model == "sonar-pro"


def test_a_list_is_tried_in_order_names_or_mappings() -> None:
    settings = search(
        {
            "providers": [
                {"name": "searxng", "base_url": "http://127.0.0.1:8888/"},
                {"name": "brave", "api_key": "${BRAVE}"},
            ]
        },
        BRAVE="b",
    )
    service = settings.service()
    assert service.names == ["searxng", "brave"]
    searxng, brave = service.providers
    assert isinstance(searxng, SearxngSearch) and searxng.base_url == "http://127.0.0.1:8888"
    assert isinstance(brave, BraveSearch) and brave.base_url == "https://api.search.brave.com"


def test_search_is_off_by_default_and_link_reading_on() -> None:
    settings = search({})
    assert not settings.enabled and settings.fetch.enabled
    assert search({"provider": "none", "fetch": None}).fetch.max_redirects == 5


@pytest.mark.parametrize(
    ("section", "words"),
    [
        ({"provider": "searxng"}, "searxng needs base_url"),
        ({"provider": "tavily", "api_key": "${UNSET}"}, "tavily needs api_key"),
        ({"providers": ["brave"]}, "brave needs api_key"),
        ({"provider": "bing"}, "search.provider"),
        (
            {"provider": "searxng", "base_url": "http://x", "providers": ["searxng"]},
            "give search.provider or search.providers, not both",
        ),
        ({"provider": "searxng", "base_url": "127.0.0.1:8888"}, "must start with http"),
        ({"fetch": {"allow_hosts": ["wiki:http"]}}, "the port must be a number"),
        ({"fetch": {"max_redirects": 50}}, "search.fetch.max_redirects"),
    ],
)
def test_mistakes_are_named(section: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError) as raised:
        search(section)
    assert words in str(raised.value)

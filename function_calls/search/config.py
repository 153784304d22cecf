"""`search:` in config.yaml: which providers, tried in order, with their URLs and keys;
the cache and the per-chat limit; and `search.fetch`, the limits of reading links.

    search:
      provider: searxng              # or providers: [searxng, {name: brave, api_key: …}]
      base_url: http://127.0.0.1:8888
      fetch:
        allow_hosts: [wiki.internal] # reachable on purpose although inside the network
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from groupmate.function_calls.links import AllowList, FetchLimits
from groupmate.function_calls.search._types import SearchProvider
from groupmate.function_calls.search.service import WebSearch
from groupmate.function_calls.sections import OptionalText, Secret

ProviderName = Literal["perplexity", "openai", "searxng", "tavily", "brave"]
DEFAULT_URLS: dict[str, str] = {
    "perplexity": "https://api.perplexity.ai",
    "tavily": "https://api.tavily.com",
    "brave": "https://api.search.brave.com",
}
_KEYED = frozenset({"perplexity", "tavily", "brave"})


class _Strict(BaseModel):
    # A setting's docstring is its description: the configuration reference prints it.
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class ProviderSettings(_Strict):
    """One provider. `base_url` defaults to the service's own (SearXNG and `openai` have
    none: they are yours); `model` is for perplexity and openai only."""

    name: ProviderName
    """The provider. Required; a plain string in the list is this."""
    base_url: OptionalText = None
    """Its address. Unset: the service's own (perplexity, tavily, brave); searxng and
    openai have none and need it."""
    api_key: Secret = None
    """Its API key; tavily, brave and perplexity need one."""
    model: str = "sonar"
    """The model that searches, for perplexity and openai only."""
    timeout: float = Field(15, gt=0, le=120)
    """Seconds one search may take before the next provider is tried."""

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if self.base_url is None:
            self.base_url = DEFAULT_URLS.get(self.name)
        if self.base_url is None:
            raise ValueError(f"{self.name} needs base_url (the address of your instance)")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, not {self.base_url!r}")
        if self.name in _KEYED and self.api_key is None:
            raise ValueError(f"{self.name} needs api_key (for example api_key: ${{SEARCH_KEY}})")
        return self

    def provider(self, max_results: int) -> SearchProvider:
        assert self.base_url is not None  # filled in by _complete
        # Imported here, not with the config: the providers import the model client, and
        # `groupmate check` of a config without search reads this module.
        from groupmate.function_calls.search.providers import (
            BraveSearch,
            ModelSearch,
            SearxngSearch,
            TavilySearch,
        )

        key = self.api_key.get_secret_value() if self.api_key else None
        if self.name in ("perplexity", "openai"):
            return ModelSearch(
                base_url=self.base_url,
                api_key=key,
                model=self.model,
                timeout=self.timeout,
                name=self.name,
            )
        kinds = {"searxng": SearxngSearch, "tavily": TavilySearch, "brave": BraveSearch}
        return kinds[self.name](
            base_url=self.base_url, api_key=key, timeout=self.timeout, max_results=max_results
        )

    def label(self) -> str:
        """For `groupmate check`: the name and address, never the key."""
        return f"{self.name} ({self.base_url})"


class FetchSettings(_Strict):
    enabled: bool = True
    """Read the links users send (read_url, /read)."""
    allow_hosts: list[str] = Field(default_factory=list)
    """Hosts inside your network (`host` or `host:port`, IP addresses too) the bot may
    read on purpose. Others on private, loopback or link-local addresses are refused."""
    max_bytes: int = Field(2_000_000, ge=10_000, le=50_000_000)
    """The most of a page that is read, in bytes; a longer page is cut here."""
    connect_timeout: float = Field(5, gt=0, le=60)
    """Seconds to connect to a page's server."""
    timeout: float = Field(20, gt=0, le=300)
    """Seconds reading one page may take in all."""
    max_redirects: int = Field(5, ge=0, le=10)
    """Redirects followed per link; each one is checked like the link itself."""

    @model_validator(mode="after")
    def _hosts_read(self) -> Self:
        AllowList.parse(self.allow_hosts)  # a bad entry fails the config, by its key
        return self

    def limits(self) -> FetchLimits:
        return FetchLimits(
            max_bytes=self.max_bytes,
            connect_timeout=self.connect_timeout,
            timeout=self.timeout,
            max_redirects=self.max_redirects,
            allow=AllowList.parse(self.allow_hosts),
        )


class SearchSettings(_Strict):
    """One provider (`provider` with `base_url`, `api_key`, `model`, `timeout` beside
    it), or `providers`, a list tried in order: names, or mappings like ProviderSettings."""

    provider: ProviderName | Literal["none"] = "none"
    """The one search provider; `none`: no web search. For several, tried in order,
    use `providers` instead."""
    base_url: OptionalText = None
    """The provider's address: your SearXNG instance (its settings.yml must enable the
    json format) or your `openai` endpoint. Unset: the service's own."""
    api_key: Secret = None
    """The provider's API key: tavily, brave and perplexity need one."""
    model: str = "sonar"
    """The model that searches, for perplexity and openai only."""
    timeout: float = Field(15, gt=0, le=120)
    """Seconds one search may take."""
    providers: list[ProviderSettings] = Field(default_factory=list)
    """Providers tried in order until one answers, instead of `provider`: names, or
    mappings with their own `base_url`, `api_key`, `model` and `timeout`."""
    max_results: int = Field(5, ge=1, le=10)
    """Results per search passed to the model."""
    cache_ttl: float = Field(600, ge=0)
    """Seconds an identical query is answered from memory; 0: never."""
    cache_size: int = Field(256, ge=0, le=100_000)
    """Queries kept in that memory."""
    per_chat_per_hour: int = Field(30, ge=0)
    """Searches one chat may start in an hour; 0: no limit."""
    fetch: FetchSettings = Field(default_factory=FetchSettings)
    """Reading the links users send: what may be read, and how much."""

    @model_validator(mode="before")
    @classmethod
    def _shapes(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if data.get("fetch") is None:
            data.pop("fetch", None)  # every line commented out: the defaults
        listed = data.get("providers")
        if isinstance(listed, list):
            data["providers"] = [{"name": p} if isinstance(p, str) else p for p in listed]
        one = data.get("provider")
        if one not in (None, "none") and listed:
            raise ValueError("give search.provider or search.providers, not both")
        if one not in (None, "none"):
            single = {"name": one}
            for key in ("base_url", "api_key", "model", "timeout"):
                if data.get(key) is not None:
                    single[key] = data[key]
            data["providers"] = [single]
        return data

    @property
    def enabled(self) -> bool:
        return bool(self.providers)

    def service(self, providers: Sequence[SearchProvider] | None = None) -> WebSearch:
        """The configured providers, or an embedder's own, cached and limited as set."""
        if providers is None:
            providers = [settings.provider(self.max_results) for settings in self.providers]
        return WebSearch(
            providers,
            cache_ttl=self.cache_ttl,
            cache_size=self.cache_size,
            per_chat_per_hour=self.per_chat_per_hour,
        )

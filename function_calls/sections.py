"""What every config section is made of: a model that refuses unknown keys and takes a
null subsection for its defaults, and the types of values an unset ${ENV_VAR} leaves empty.

Light on purpose: each adapter's settings module builds on it without loading the
platform's library, as the tools' settings (search) do, and bot.config composes them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, SecretStr, model_validator


def is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _unset_if_empty(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


# An unset ${ENV_VAR} interpolates to "", which means "not configured".
Secret = Annotated[SecretStr | None, BeforeValidator(_unset_if_empty)]
OptionalText = Annotated[str | None, BeforeValidator(_unset_if_empty)]


def require(section: BaseModel, needed: Mapping[str, bool], *, context: str = "") -> None:
    """ValueError naming each setting that is `needed` (True) and unset: `groupmate check`
    (and serve) say what is missing before anything connects."""
    missing = [name for name, wanted in needed.items() if wanted and getattr(section, name) is None]
    if missing:
        raise ValueError(f"{' and '.join(missing)} required{context} (unset)")


class Section(BaseModel):
    # A setting's docstring is its description (docs/reference/configuration.md prints
    # it): the field's own line keeps its type, default and bounds readable, as with
    # Field(description=...) it would not, and the API docs show the same text.
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    @model_validator(mode="before")
    @classmethod
    def _empty_subsections(cls, data: Any) -> Any:
        # A section whose every line is commented out (`budget:` above `# tokens…`) is
        # null in YAML; it means "the defaults", as an absent one does.
        if isinstance(data, dict):
            return {
                key: value
                for key, value in data.items()
                if value is not None
                or not (key in cls.model_fields and is_section(cls.model_fields[key].annotation))
            }
        return data

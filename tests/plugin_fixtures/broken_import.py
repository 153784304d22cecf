"""A plugin whose import fails."""

from __future__ import annotations

import groupmate_no_such_dependency  # type: ignore[import-not-found]  # noqa: F401

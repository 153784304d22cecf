"""Packages whose public names are imported when first used (PEP 562), not with the
package: importing one light module of a package (a config's settings, say) must not
import every module the package re-exports, the model client and the web framework
among them. Each package keeps its real imports under `if TYPE_CHECKING:` for type
checkers and readers, and hands the same names to `lazy_exports`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`, which exports each name of `homes` (module
    -> the names it defines): `from package import X` and `package.X` import X's module
    when first asked for, then keep X on the package."""
    home_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        home = home_of.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__

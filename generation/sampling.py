"""Sampling settings and the plan: which samples a run must have."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Literal

from .errors import GenerationError

Mode = Literal["completion", "chat"]
HUMANEVAL_STOPS = ("\ndef", "\nclass", "\nif", "\nprint", "\n#")
"""The Codex paper's stop sequences for completion models."""


@dataclass(frozen=True)
class SamplingSettings:
    """What shapes one sample; two runs with equal settings share their samples."""

    mode: Mode = "completion"
    top_p: float = 0.95
    max_new_tokens: int = 512
    stop: tuple[str, ...] = HUMANEVAL_STOPS
    seed: int | None = None
    dtype: str | None = None
    """The type a local model computed in (float32, bfloat16); None for other backends."""

    def __post_init__(self) -> None:
        if self.mode not in ("completion", "chat"):
            raise GenerationError(f"mode {self.mode!r}: use completion or chat")
        if not 0 < self.top_p <= 1:
            raise GenerationError(f"top_p {self.top_p}: must be in (0, 1]")
        if self.max_new_tokens < 1:
            raise GenerationError(f"max new tokens {self.max_new_tokens}: must be at least 1")

    @cached_property  # read for every stored sample: computed once
    def key(self) -> str:
        """A short fingerprint stored with every sample (samples of other settings never mix).
        float32, the only type local models computed in before `dtype` existed, is left out of
        it (as is None), so the stores made then keep resuming."""
        fields = asdict(self)
        if fields["dtype"] in (None, "float32"):
            del fields["dtype"]
        text = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def to_dict(self) -> dict:
        return {**asdict(self), "stop": list(self.stop), "key": self.key}


@dataclass(frozen=True)
class SampleSlot:
    """One sample a plan asks for."""

    model: str
    prompt_set: str
    variant: str
    task_id: str
    temperature: float
    index: int
    settings_key: str = field(default="")


def check_temperatures(temperatures: list[float]) -> list[float]:
    bad = [t for t in temperatures if not 0 <= t <= 2]
    if bad or not temperatures:
        raise GenerationError(f"temperatures {bad or temperatures}: each must be in [0, 2]")
    return sorted(set(temperatures))

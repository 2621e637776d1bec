"""What every backend does: turn generation requests into texts, reporting each as it ends.

Resume, planning and storage are kept out of the backends (the runner does them).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..sampling import Mode


@dataclass(frozen=True)
class GenerationRequest:
    """n samples of one prompt at one temperature."""

    key: object
    """The runner's handle for the request (what the results belong to)."""
    prompt: str
    """Completion mode: the code to continue. Chat mode: the user message."""
    n: int
    temperature: float
    top_p: float
    max_new_tokens: int
    stop: tuple[str, ...]
    mode: Mode
    seed: int | None = None


@dataclass(frozen=True)
class GenerationResult:
    request: GenerationRequest
    texts: list[str] = field(default_factory=list)
    finish_reasons: list[str] = field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    """Totals over the request's texts."""
    latency: float = 0.0
    error: str | None = None
    """Set when the request failed for good (after retries); texts are then empty."""
    text_tokens: list[int] | None = None
    """Each text's own completion token count, where the backend knows it (None: only the
    total is known, as from an API that reports usage per request)."""
    prompt_tokens_each: int | None = None
    """The prompt's token count (one sample's share of the prompt)."""


OnResult = Callable[[GenerationResult], None]


class Backend(ABC):
    """A model that generates text; `generate` calls `on_result` once per request."""

    default_mode: Mode = "completion"
    signals_bursts: bool = False
    """Whether `generate` calls `on_result.flush()`, where `on_result` has one, each time it
    has handed over every result it holds (and before it returns): the caller may then store
    a burst of results in one write instead of one write each."""

    @abstractmethod
    def generate(self, requests: Sequence[GenerationRequest], on_result: OnResult) -> None: ...

    def describe(self) -> dict:
        """Settings and library versions recorded with each run (never secrets)."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the model or connections."""

"""Log-prob scorers: a factory that imports a scorer's module only when its model is chosen,
and a cache so that several likelihood signals score each text once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..base import LogProbScorer, ScoredText, ScoringText, SignalError


@dataclass(frozen=True)
class ScorerOptions:
    base_url: str | None = None
    api_key: str | None = None
    batch_size: int = 4
    concurrency: int = 8
    timeout: float = 120.0


class ScorerFactory:
    """Makes the scorer of a model as the store names it, and says the identity its scores are
    stored under without loading anything."""

    def __init__(self, options: ScorerOptions | None = None) -> None:
        self.options = options or ScorerOptions()

    def identity(self, model: str) -> str:
        if model.startswith("openai:"):
            from ...generation.secrets import redact_url

            where = redact_url(self.options.base_url) or "api.openai.com"
            return f"{model}@{where}"
        return model

    def __call__(self, model: str) -> LogProbScorer:
        return make_scorer(model, self.options)


def make_scorer(model: str, options: ScorerOptions) -> LogProbScorer:
    """A scorer for a model as the store names it: `hf:<path>`, `embedded`, `openai:<name>`."""
    from ...generation.errors import GenerationError
    from ...generation.specs import parse_model_spec

    try:
        spec = parse_model_spec(model)
    except GenerationError as error:
        raise SignalError(f"cannot score with {model!r}: {error}") from error
    if spec.kind == "openai":
        from .openai_scorer import OpenAIScorer

        return CachingScorer(
            OpenAIScorer(
                spec.name, options.base_url, options.api_key, options.concurrency, options.timeout
            )
        )
    from ...generation.backends import BackendOptions, make_backend
    from .transformers_scorer import TransformersScorer

    try:  # the generation backend loads local models (offline); the scorer reuses its model
        # float32 whatever the generation used: log-probs are measured, not sampled
        options_float32 = BackendOptions(batch_size=options.batch_size, dtype="float32")
        backend = make_backend(spec, options_float32)
    except GenerationError as error:
        raise SignalError(str(error)) from error
    scorer = TransformersScorer(backend.model, backend.tokenizer, spec.label, options.batch_size)  # type: ignore[attr-defined]
    return CachingScorer(scorer)


class CachingScorer:
    """Wraps a scorer; each distinct text is scored once per process."""

    def __init__(self, scorer: LogProbScorer) -> None:
        self.inner = scorer
        self.identity = scorer.identity
        self.full_distribution = scorer.full_distribution
        self.cache: dict[ScoringText, ScoredText] = {}
        self.calls = 0
        """Texts the inner scorer was asked to score (a cache miss each)."""

    def unavailable_reason(self) -> str | None:
        return self.inner.unavailable_reason()

    def score(self, texts: Sequence[ScoringText]) -> list[ScoredText]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            self.calls += len(missing)
            for text, result in zip(missing, self.inner.score(missing), strict=True):
                self.cache[text] = result
        return [self.cache[t] for t in texts]


__all__ = ["CachingScorer", "ScorerFactory", "ScorerOptions", "make_scorer"]

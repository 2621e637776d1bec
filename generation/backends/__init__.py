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


def local_sampling_defaults(spec: ModelSpec, options: BackendOptions) -> tuple[str, str] | None:
    """(default mode, dtype) the backend of a local model will have, found without loading its
    weights (which can take minutes), so a run whose samples are all stored need not load it;
    None when that cannot be told (a server; a model whose tokenizer does not load: loading
    the backend then says why). The mode is `chat` when the tokenizer has a chat template (the
    embedded model's has, so it is not loaded either); the dtype is the one the weights are
    loaded in."""
    if spec.kind == "openai":
        return None
    from ..errors import GenerationError
    from .dtype import choose_dtype

    try:
        dtype = choose_dtype(options.dtype)
        if spec.kind == "embedded":
            from .embedded import embedded_model_folder

            embedded_model_folder()
            return "chat", dtype
        import transformers

        transformers.utils.logging.set_verbosity_error()
        tokenizer = transformers.AutoTokenizer.from_pretrained(spec.name, local_files_only=True)
    except (GenerationError, OSError, ValueError, ImportError):
        return None
    return ("chat" if getattr(tokenizer, "chat_template", None) else "completion"), dtype


__all__ = [
    "Backend",
    "BackendOptions",
    "GenerationRequest",
    "GenerationResult",
    "OnResult",
    "local_sampling_defaults",
    "make_backend",
]

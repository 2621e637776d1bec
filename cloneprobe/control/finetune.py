"""Contaminating a causal LM on purpose, cheaply on CPU: only its top decoder layers learn.

The bottom layers stay frozen, so their output for each training text is computed once
(`cache_hidden_states`, one forward pass through the bottom layers only) and every epoch runs
the top `top_layers` layers, the final norm and the output head on those cached states. The
loss is the cross-entropy of the answer's tokens only (the prompt is context, not taught), and
the output head is applied only at the positions that predict them. Doses are epochs: one
training run is snapshotted after each dose's number of epochs.

Works for decoder-only transformers models laid out as `model.model.layers`,
`model.model.norm`, `model.model.rotary_emb` and `model.lm_head` (Llama, Mistral, Qwen2,
SmolLM, ...); anything else is refused with a message.
"""

from __future__ import annotations

import copy
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from cloneprobe.settings import FineTuneError, FineTuneSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainingText:
    """Token ids of the context (as the model is queried) and of the answer it must learn."""

    context_ids: tuple[int, ...]
    answer_ids: tuple[int, ...]


def _parts(model):
    inner = getattr(model, "model", None)
    names = ("layers", "norm", "rotary_emb")
    if inner is None or not all(hasattr(inner, n) for n in names) or not hasattr(model, "lm_head"):
        raise FineTuneError(
            f"{type(model).__name__}: not laid out as model.layers / norm / rotary_emb / lm_head "
            "(a Llama-like decoder); give a Llama, Mistral, Qwen2 or SmolLM checkpoint"
        )
    return inner


def _split_point(model, settings: FineTuneSettings) -> int:
    layers = len(_parts(model).layers)
    if settings.top_layers > layers:
        raise FineTuneError(
            f"top layers {settings.top_layers}: the model has only {layers} decoder layers"
        )
    return layers - settings.top_layers


def _ids(text: TrainingText, max_tokens: int) -> list[int]:
    ids = list(text.context_ids) + list(text.answer_ids)
    return ids[-max_tokens:]


def cache_hidden_states(
    model,
    texts: Sequence[TrainingText],
    settings: FineTuneSettings,
    progress: Callable[[int], None] | None = None,
) -> list[torch.Tensor]:
    """The output of the frozen bottom layers for each text, [1, tokens, hidden] each."""
    inner = _parts(model)
    split = _split_point(model, settings)
    all_layers = inner.layers
    captured: list[torch.Tensor] = []
    states = []
    if split == 0:
        with torch.inference_mode():
            for text in texts:
                ids = torch.tensor([_ids(text, settings.max_tokens)])
                states.append(inner.embed_tokens(ids).detach().clone())
                if progress:
                    progress(1)
        return states
    hook = all_layers[split - 1].register_forward_hook(
        lambda module, args, output: captured.append(
            (output[0] if isinstance(output, tuple) else output).detach().clone()
        )
    )
    inner.layers = all_layers[:split]  # the top layers' work would be thrown away
    try:
        with torch.inference_mode():
            for text in texts:
                ids = torch.tensor([_ids(text, settings.max_tokens)])
                captured.clear()
                inner(input_ids=ids, use_cache=False)
                states.append(captured[-1].clone())
                if progress:
                    progress(1)
    finally:
        inner.layers = all_layers
        hook.remove()
    return states


def top_logits(model, hidden: torch.Tensor, split: int, positions: slice) -> torch.Tensor:
    """Run the layers from `split` on, on one text's states; logits at `positions` only."""
    inner = _parts(model)
    length = hidden.shape[1]
    position_ids = torch.arange(length).unsqueeze(0)
    embeddings = inner.rotary_emb(hidden, position_ids)
    for layer in inner.layers[split:]:
        out = layer(hidden, attention_mask=None, position_ids=position_ids,
                    position_embeddings=embeddings, use_cache=False)  # fmt: skip
        hidden = out[0] if isinstance(out, tuple) else out
    return model.lm_head(inner.norm(hidden[:, positions]))


def answer_loss(model, hidden: torch.Tensor, text: TrainingText, split: int, max_tokens: int):
    ids = _ids(text, max_tokens)
    answer = min(len(text.answer_ids), len(ids) - 1)
    targets = torch.tensor(ids[-answer:])
    logits = top_logits(model, hidden, split, slice(len(ids) - answer - 1, len(ids) - 1))
    return torch.nn.functional.cross_entropy(logits[0].float(), targets)


def contaminate(
    model,
    texts: Sequence[TrainingText],
    doses: dict[str, int],
    settings: FineTuneSettings,
    progress: Callable[[int], None] | None = None,
    states: list[torch.Tensor] | None = None,
) -> dict[str, object]:
    """Fine-tune a copy of `model` on `texts`; returns, per dose name, a copy of the model
    after that dose's number of epochs (`model` itself is left as it was). `progress` advances
    once per text cached and once per text trained on."""
    if not texts:
        raise FineTuneError("no training texts: the contaminated half is empty")
    if any(epochs < 1 for epochs in doses.values()):
        raise FineTuneError(f"doses {doses}: every dose needs at least one epoch")
    split = _split_point(model, settings)
    if states is None:
        states = cache_hidden_states(model, texts, settings, progress)
    student = copy.deepcopy(model)
    student.train()
    trained = [p for layer in _parts(student).layers[split:] for p in layer.parameters()]
    trained += list(_parts(student).norm.parameters())
    for parameter in student.parameters():
        parameter.requires_grad_(False)
    for parameter in trained:
        parameter.requires_grad_(True)
    optimizer = torch.optim.AdamW(trained, lr=settings.learning_rate, weight_decay=0.0)
    order = random.Random(settings.seed)
    snapshots: dict[str, object] = {}
    by_epochs = sorted(doses.items(), key=lambda item: item[1])
    indices = list(range(len(texts)))
    for epoch in range(1, by_epochs[-1][1] + 1):
        order.shuffle(indices)
        total = 0.0
        for index in indices:
            optimizer.zero_grad(set_to_none=True)
            loss = answer_loss(student, states[index], texts[index], split, settings.max_tokens)
            loss.backward()
            optimizer.step()
            total += float(loss.detach())
            if progress:
                progress(1)
        log.info("epoch %d: mean answer loss %.4f", epoch, total / len(texts))
        for name, epochs in by_epochs:
            if epochs == epoch:
                snapshot = copy.deepcopy(student).eval()
                for parameter in snapshot.parameters():
                    parameter.requires_grad_(False)
                snapshots[name] = snapshot
    return snapshots

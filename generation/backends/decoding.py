"""Batched, KV-cached sampling for local causal language models, one random stream per sample.

`decode_batch` generates several sequences in one batch: each distinct prompt is prefilled once
(left-padded, only the last position's logits computed) and its cache is repeated for the
samples that share it; a sequence leaves the batch (its cache rows are dropped) as soon as it
ends, so the steps after that cost only what is still running. Every sequence draws its tokens
from its own `torch.Generator`, seeded from the run's seed plus the sample's index, the
temperature and the prompt text (`sequence_seed`): a sample does not depend on which other
samples share its batch, nor on the batch size or the order of the tasks.

Sampling is temperature then nucleus (top-p): the smallest set of most likely tokens whose
probability reaches `top_p` is kept, renormalised, and one token is drawn by inverse transform
with the sequence's own uniform draw. Temperature 0 is greedy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from .growing_cache import growing_cache

StopCheck = Callable[[str], bool]
"""Given a sequence's new text so far, whether it is finished."""


@dataclass(frozen=True)
class SequenceToDecode:
    prompt_ids: tuple[int, ...]
    seed: int | None
    """Seed of this sequence's own random stream (None: the global generator's state)."""


@dataclass(frozen=True)
class Decoded:
    token_ids: tuple[int, ...]
    """New tokens, an end token excluded."""
    text: str
    finish_reason: str
    """`stop` (an end token, a stop sequence or the stop check) or `length`."""


def sequence_seed(seed: int, temperature: float, prompt: str) -> int:
    """The seed of one sample's random stream: a hash of the sample's own seed (the run's seed
    plus the sample's index), its temperature and the prompt text as the model reads it."""
    key = f"{seed}\x00{float(temperature)!r}\x00{prompt}"
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little") >> 1


NUCLEUS_CANDIDATES = 256
"""Most likely tokens among which the nucleus is looked for first (see `sample_tokens`)."""


def sample_tokens(
    logits: torch.Tensor,
    temperature: float,
    top_p: float,
    uniforms: torch.Tensor,
    candidates: int = NUCLEUS_CANDIDATES,
) -> torch.Tensor:
    """One token per row of `logits` [rows, vocab]: greedy at temperature 0, else nucleus
    sampling with the row's own uniform draw in [0, 1).

    The nucleus is looked for among the row's `candidates` most likely tokens (a partial
    sort); a row whose candidates hold less than `top_p` of the probability is sorted in full.
    Either way the row's token is the same (the nucleus lies within the candidates exactly
    when their mass reaches top_p), and it depends on the row alone."""
    if temperature <= 0:
        return logits.argmax(dim=-1)
    scaled = logits.float() / temperature
    log_total = torch.logsumexp(scaled, dim=-1, keepdim=True)
    vocab = scaled.shape[-1]
    if top_p >= 1 or candidates >= vocab:
        return _nucleus_draw(scaled.sort(dim=-1, descending=True), log_total, top_p, uniforms)
    top = scaled.topk(candidates, dim=-1)
    chosen = _nucleus_draw(top, log_total, top_p, uniforms)
    short = ((top.values - log_total).exp().sum(dim=-1) < top_p).nonzero().squeeze(-1)
    if len(short):  # the nucleus reaches past the candidates: sort these rows in full
        rows = scaled[short].sort(dim=-1, descending=True)
        chosen[short] = _nucleus_draw(rows, log_total[short], top_p, uniforms[short])
    return chosen


def _nucleus_draw(ranked, log_total: torch.Tensor, top_p: float, uniforms: torch.Tensor):
    """Inverse transform over the nucleus of `ranked` (scaled logits sorted descending, with
    their token ids), probabilities exp(logit - log_total)."""
    scores, order = ranked
    probs = (scores - log_total).exp()
    cumulative = probs.cumsum(dim=-1)
    # keep a token while the mass before it is below top_p (the most likely is always kept)
    kept = torch.where(cumulative - probs < top_p, probs, 0.0)
    kept_cumulative = kept.cumsum(dim=-1)
    targets = uniforms.to(kept_cumulative.dtype).unsqueeze(-1) * kept_cumulative[:, -1:]
    positions = torch.searchsorted(kept_cumulative, targets, right=True).clamp_(
        max=probs.shape[-1] - 1
    )
    return order.gather(-1, positions).squeeze(-1)


def decode_batch(
    model,
    tokenizer,
    sequences: Sequence[SequenceToDecode],
    *,
    temperature: float,
    top_p: float,
    max_new_tokens: int,
    end_token_ids: set[int],
    pad_token_id: int,
    stop: StopCheck | None = None,
) -> list[Decoded]:
    """Generate every sequence of the batch; see the module docstring."""
    device = model.device
    prompts: list[tuple[int, ...]] = []
    owner: list[int] = []  # which distinct prompt each sequence continues
    for sequence in sequences:
        if not prompts or prompts[-1] != sequence.prompt_ids:
            prompts.append(sequence.prompt_ids)
        owner.append(len(prompts) - 1)
    width = max(len(p) for p in prompts)
    input_ids = torch.full((len(prompts), width), pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, ids in enumerate(prompts):
        input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
        mask[row, width - len(ids) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp_(min=0)
    generators = [_generator(s.seed) for s in sequences]

    with torch.inference_mode():
        cache = growing_cache()
        out = model(
            input_ids=input_ids.to(device),
            attention_mask=mask.to(device),
            position_ids=positions.to(device),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        )
        rows = torch.tensor(owner, dtype=torch.long)
        if len(prompts) != len(sequences):
            cache.batch_select_indices(rows.to(device))
        logits = out.logits[:, -1, :][rows.to(device)]
        mask = mask[rows]
        next_position = positions[rows, -1] + 1

        active = list(range(len(sequences)))  # batch row -> sequence index
        tokens: list[list[int]] = [[] for _ in sequences]
        finished: list[str | None] = [None] * len(sequences)
        for step in range(max_new_tokens):
            uniforms = torch.stack(
                [torch.rand((), generator=generators[i]) for i in active]
            ) if temperature > 0 else torch.zeros(len(active))  # fmt: skip
            chosen = sample_tokens(logits, temperature, top_p, uniforms).tolist()
            keep = []
            for row, (index, token) in enumerate(zip(active, chosen, strict=True)):
                if token in end_token_ids:
                    finished[index] = "stop"
                    continue
                tokens[index].append(token)
                if stop is not None and stop(tokenizer.decode(tokens[index])):
                    finished[index] = "stop"
                    continue
                keep.append(row)
            if not keep or step == max_new_tokens - 1:
                break
            if len(keep) < len(active):
                selected = torch.tensor(keep, dtype=torch.long)
                cache.batch_select_indices(selected.to(device))
                mask = mask[selected]
                next_position = next_position[selected]
                chosen = [chosen[row] for row in keep]
                active = [active[row] for row in keep]
            mask = torch.cat([mask, torch.ones((len(active), 1), dtype=torch.long)], dim=-1)
            out = model(
                input_ids=torch.tensor(chosen, dtype=torch.long).unsqueeze(-1).to(device),
                attention_mask=mask.to(device),
                position_ids=next_position.unsqueeze(-1).to(device),
                past_key_values=cache,
                use_cache=True,
            )
            next_position = next_position + 1
            logits = out.logits[:, -1, :]
    return [
        Decoded(tuple(ids), tokenizer.decode(ids, skip_special_tokens=True), reason or "length")
        for ids, reason in zip(tokens, finished, strict=True)
    ]


def _generator(seed: int | None) -> torch.Generator:
    generator = torch.Generator()
    if seed is None:
        generator.manual_seed(int(torch.randint(0, 2**62, ()).item()))
    else:
        generator.manual_seed(seed)
    return generator

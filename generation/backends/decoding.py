"""Batched, KV-cached sampling for local causal language models, one random stream per sample.

`decode_stream` streams sequences through one batch of at most `batch_size` rows: a prompt is
prefilled as its sequence joins (left-padded, only the last position's logits computed, its
cache rows aligned with the running ones); a sequence leaves the batch (its cache rows are
dropped) as soon as it ends and a waiting one takes its place, so the batch stays full until
the queue is empty. Every sequence draws its tokens
from its own `torch.Generator`, seeded from the run's seed plus the sample's index, the
temperature and the prompt text (`sequence_seed`): a sample does not depend on which other
samples share its batch, nor on the batch size or the order of the tasks.

Sampling is temperature then nucleus (top-p): the smallest set of most likely tokens whose
probability reaches `top_p` is kept, renormalised, and one token is drawn by inverse transform
with the sequence's own uniform draw. Temperature 0 is greedy.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from .growing_cache import drop_front, growing_cache, join_rows

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


ADMIT_WHEN_FREE = 4
"""Waiting sequences join a running batch once 1/ADMIT_WHEN_FREE of its rows are free (or it
is empty): each joining copies the cache once, so they join a few at a time."""

OnDecoded = Callable[[int, Decoded], None]
"""Called with a sequence's index (in the sequences given) and its result as soon as it ends."""


def decode_stream(
    model,
    tokenizer,
    sequences: Sequence[SequenceToDecode],
    *,
    batch_size: int,
    temperature: float,
    top_p: float,
    max_new_tokens: int,
    end_token_ids: set[int],
    pad_token_id: int,
    on_decoded: OnDecoded,
    stop: StopCheck | None = None,
) -> None:
    """Generate every sequence, at most `batch_size` at a time, in the order given: a sequence
    that ends leaves the batch, and waiting ones join it (prefilled as they join, their cache
    rows aligned with the running ones), so the batch stays full until the queue is empty.
    A decoding step costs nearly the same for 4 rows as for 16 (the weights are read once), so
    a batch left to run down spends most of its steps on a few long sequences."""
    if max_new_tokens < 1:
        for index in range(len(sequences)):
            on_decoded(index, Decoded((), "", "length"))
        return
    waiting = deque(range(len(sequences)))
    generators: dict[int, torch.Generator] = {}
    tokens: dict[int, list[int]] = {}
    admit_at = max(1, batch_size // ADMIT_WHEN_FREE)
    batch: _Running | None = None
    with torch.inference_mode():
        while True:
            free = batch_size - (len(batch.active) if batch else 0)
            if waiting and (free >= admit_at or batch is None):
                joining = [waiting.popleft() for _ in range(min(free, len(waiting)))]
                for index in joining:
                    generators[index] = _generator(sequences[index].seed)
                    tokens[index] = []
                joined = _prefill(model, [sequences[i] for i in joining], joining, pad_token_id)
                batch = joined if batch is None else batch.join(joined)
            if batch is None:
                return
            uniforms = torch.stack(
                [torch.rand((), generator=generators[i]) for i in batch.active]
            ) if temperature > 0 else torch.zeros(len(batch.active))  # fmt: skip
            chosen = sample_tokens(batch.logits, temperature, top_p, uniforms).tolist()
            keep = []
            for row, (index, token) in enumerate(zip(batch.active, chosen, strict=True)):
                ids = tokens[index]
                reason = None
                if token in end_token_ids:
                    reason = "stop"
                else:
                    ids.append(token)
                    if stop is not None and stop(tokenizer.decode(ids)):
                        reason = "stop"
                    elif len(ids) >= max_new_tokens:
                        reason = "length"
                if reason is None:
                    keep.append(row)
                    continue
                text = tokenizer.decode(ids, skip_special_tokens=True)
                on_decoded(index, Decoded(tuple(ids), text, reason))
                del tokens[index], generators[index]
            if not keep:
                batch = None
                continue
            batch = batch.keep_rows(keep) if len(keep) < len(batch.active) else batch
            batch.step(model, [chosen[row] for row in keep])


class _Running:
    """The batch being decoded: its sequences (by index), cache, attention mask (left-padded,
    one column per cache position), next positions and the logits of their next token."""

    def __init__(self, active, cache, mask, next_position, logits) -> None:
        self.active: list[int] = active
        self.cache = cache
        self.mask: torch.Tensor = mask
        self.next_position: torch.Tensor = next_position
        self.logits: torch.Tensor = logits

    def join(self, other: _Running) -> _Running:
        join_rows(self.cache, other.cache)
        width = max(self.mask.shape[-1], other.mask.shape[-1])
        self.mask = torch.cat([_left_pad(self.mask, width), _left_pad(other.mask, width)])
        self.next_position = torch.cat([self.next_position, other.next_position])
        self.logits = torch.cat([self.logits, other.logits])
        self.active = self.active + other.active
        return self

    def keep_rows(self, rows: list[int]) -> _Running:
        """Only these rows go on; positions that are padding in every row left are dropped."""
        selected = torch.tensor(rows, dtype=torch.long)
        self.cache.batch_select_indices(selected.to(self.logits.device))
        self.mask = self.mask[selected]
        self.next_position = self.next_position[selected]
        self.active = [self.active[row] for row in rows]
        padding = self.mask.shape[-1] - int(self.next_position.max())  # real tokens per row
        if padding > 0:
            drop_front(self.cache, padding)
            self.mask = self.mask[:, padding:]
        return self

    def step(self, model, chosen: list[int]) -> None:
        """One KV-cached forward pass of the chosen tokens; the next logits."""
        device = model.device
        self.mask = torch.cat(
            [self.mask, torch.ones((len(self.active), 1), dtype=torch.long)], dim=-1
        )
        out = model(
            input_ids=torch.tensor(chosen, dtype=torch.long).unsqueeze(-1).to(device),
            attention_mask=self.mask.to(device),
            position_ids=self.next_position.unsqueeze(-1).to(device),
            **{cache_keyword(model): self.cache},
            use_cache=True,
        )
        self.next_position = self.next_position + 1
        self.logits = out.logits[:, -1, :]


def cache_keyword(model) -> str:
    """The forward argument that takes the KV cache: `cache` where the model's forward has it
    (newer transformers, which warn that `past_key_values` is going), else `past_key_values`."""
    return _cache_keyword(type(model).forward)


@functools.cache
def _cache_keyword(forward) -> str:
    return "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"


def _prefill(model, sequences: Sequence[SequenceToDecode], indices: list[int], pad_token_id):
    """The joining sequences' prompts run through the model (each distinct prompt once, its
    cache repeated for the samples that share it), left-padded to the longest."""
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
    cache = growing_cache()
    out = model(
        input_ids=input_ids.to(device),
        attention_mask=mask.to(device),
        position_ids=positions.to(device),
        **{cache_keyword(model): cache},
        use_cache=True,
        logits_to_keep=1,
    )
    rows = torch.tensor(owner, dtype=torch.long)
    if len(prompts) != len(sequences):
        cache.batch_select_indices(rows.to(device))
    logits = out.logits[:, -1, :][rows.to(device)]
    return _Running(list(indices), cache, mask[rows], positions[rows, -1] + 1, logits)


def _left_pad(mask: torch.Tensor, width: int) -> torch.Tensor:
    missing = width - mask.shape[-1]
    if not missing:
        return mask
    return torch.cat([mask.new_zeros((mask.shape[0], missing)), mask], dim=-1)


def _generator(seed: int | None) -> torch.Generator:
    generator = torch.Generator()
    if seed is None:
        generator.manual_seed(int(torch.randint(0, 2**62, ()).item()))
    else:
        generator.manual_seed(seed)
    return generator

"""Token log-probabilities from a local transformers model (imported only when chosen).

Texts are scored in batches, left-padded with position ids from the attention mask so a
padded text scores as it would alone; only the last positions' logits are computed
(`logits_to_keep`: the targets sit at the end of their texts), which keeps memory small on
CPU. A token belongs to the target when it carries at least one character of it (a token
straddling the context's end counts for the target; tokens wholly in the context never do).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import torch

from ..base import ScoredText, ScoringText, SignalError, TokenLogProbs, Unscored

log = logging.getLogger(__name__)


class TransformersScorer:
    """Scores with a loaded causal LM and its tokenizer."""

    full_distribution = True

    def __init__(self, model, tokenizer, identity: str, batch_size: int = 4) -> None:
        if batch_size < 1:
            raise SignalError(f"batch size {batch_size}: must be at least 1")
        if not getattr(tokenizer, "is_fast", False):
            raise SignalError(
                f"{identity}: its tokenizer gives no character offsets (not a fast tokenizer); "
                "the scored span cannot be told from the prompt"
            )
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.identity = identity
        self.batch_size = batch_size

    def unavailable_reason(self) -> str | None:
        return None

    def render(self, text: ScoringText) -> tuple[str, int, bool]:
        """(whole text, characters of context before the target, add special tokens?)."""
        if text.mode == "chat":
            template = getattr(self.tokenizer, "chat_template", None)
            if template:
                rendered = self.tokenizer.apply_chat_template(
                    [{"role": "user", "content": text.prompt}],
                    add_generation_prompt=True,
                    tokenize=False,
                )
                context = rendered + text.answer_prefix
                return context + text.target, len(context), False
            context = text.prompt + text.answer_prefix  # as the backend sends it untemplated
            return context + text.target, len(context), True
        return text.prompt + text.target, len(text.prompt), True

    def score(self, texts: Sequence[ScoringText]) -> list[ScoredText]:
        rendered = [self.render(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(rendered[i][0]))
        results: list[ScoredText | None] = [None] * len(texts)
        for begin in range(0, len(order), self.batch_size):
            batch = order[begin : begin + self.batch_size]
            for special in (True, False):
                members = [i for i in batch if rendered[i][2] == special]
                if members:
                    scored = self._score_batch([rendered[i][:2] for i in members], special)
                    for index, result in zip(members, scored, strict=True):
                        results[index] = result
        return [r if r is not None else Unscored("not scored") for r in results]

    def _score_batch(self, items: list[tuple[str, int]], special: bool) -> list[ScoredText]:
        tokenizer = self.tokenizer
        encodings = [
            tokenizer(text, add_special_tokens=special, return_offsets_mapping=True)
            for text, _ in items
        ]
        spans = []  # (token ids, index of the first target token)
        for encoding, (_, context_chars) in zip(encodings, items, strict=True):
            ids = list(encoding["input_ids"])
            ends = [end for _, end in encoding["offset_mapping"]]
            first = next((i for i, end in enumerate(ends) if end > context_chars), len(ids))
            spans.append((ids, max(first, 1)))  # the first token of a text has no context
        width = max(len(ids) for ids, _ in spans)
        keep = max(len(ids) - first for ids, first in spans) + 1
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        input_ids = torch.full((len(spans), width), pad, dtype=torch.long)
        mask = torch.zeros((len(spans), width), dtype=torch.long)
        for row, (ids, _) in enumerate(spans):
            input_ids[row, width - len(ids) :] = torch.tensor(ids)
            mask[row, width - len(ids) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            logits = self.model(
                input_ids=input_ids, attention_mask=mask, position_ids=positions,
                logits_to_keep=keep,
            ).logits.float()  # fmt: skip
        # logits[:, j] predicts the token at position width - keep + j + 1
        log_probs = torch.log_softmax(logits[:, :-1], dim=-1)
        probs = log_probs.exp()
        means = (probs * log_probs).sum(-1)
        variances = ((probs * log_probs.square()).sum(-1) - means.square()).clamp(min=0)
        results: list[ScoredText] = []
        for row, (ids, first) in enumerate(spans):
            count = len(ids) - first
            if count <= 0:
                results.append(TokenLogProbs((), ()))
                continue
            targets = input_ids[row, width - count :]
            rows = log_probs[row, keep - 1 - count :]
            chosen = rows.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
            results.append(
                TokenLogProbs(
                    tokens=tuple(tokenizer.convert_ids_to_tokens(targets.tolist())),
                    logprobs=tuple(chosen.tolist()),
                    means=tuple(means[row, keep - 1 - count :].tolist()),
                    stds=tuple(variances[row, keep - 1 - count :].sqrt().tolist()),
                )
            )
        return results

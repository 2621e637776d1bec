"""Likelihood signals (membership inference) on the canonical solution given the prompt.

All four read the log-probabilities of the canonical body's tokens, each given the prompt as
the model is queried and the body before it (`base.canonical_scoring_text`):

- perplexity: exp(-mean log p). Lower means the model finds the canonical less surprising.
- zlib: mean log p divided by the zlib-compressed length of the body in bytes (Carlini et
  al. 2021, as the Min-K%++ authors' code computes it): the likelihood relative to how
  compressible the text is, so short or repetitive canonicals are not favoured. Higher means
  more member-like.
- min_k: Min-K% Prob (Shi et al. 2024), the mean log p of the k% least likely tokens.
  Higher means more member-like.
- min_k_plus_plus: Min-K%++ (Zhang et al. 2024): each token's log p standardised by the
  model's next-token distribution at that position, (log p(x_t) - mu_t) / sigma_t with mu_t
  and sigma_t the mean and standard deviation of log p(z) over z ~ p(. | x_<t); then the mean
  of the k% lowest. Needs the whole distribution, so only local models give it.

The k% lowest are the floor(k * n) lowest of n tokens, at least one (the papers' code takes
the floor, which is empty for short texts). A position whose distribution is a point mass
(sigma = 0) standardises to 0.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .base import ScoredText, SignalScore, TaskInputs, TokenLogProbs, Unscored

DEFAULT_K = 0.2
"""The k both papers recommend (20%)."""


def mean_log_prob(logprobs: Sequence[float]) -> float:
    return math.fsum(logprobs) / len(logprobs)


def perplexity(logprobs: Sequence[float]) -> float:
    return math.exp(-mean_log_prob(logprobs))


def zlib_length(text: str) -> int:
    """Bytes of the UTF-8 text compressed with zlib (default level)."""
    return len(zlib.compress(text.encode("utf-8")))


def zlib_ratio(logprobs: Sequence[float], text: str) -> float:
    return mean_log_prob(logprobs) / zlib_length(text)


def lowest_count(n: int, k: float) -> int:
    """How many tokens the k% lowest are: floor(k * n), at least 1."""
    return max(1, int(n * k))


def min_k_prob(logprobs: Sequence[float], k: float = DEFAULT_K) -> float:
    lowest = sorted(logprobs)[: lowest_count(len(logprobs), k)]
    return math.fsum(lowest) / len(lowest)


def standardised(
    logprobs: Sequence[float], means: Sequence[float], stds: Sequence[float]
) -> list[float]:
    """(log p(x_t) - mu_t) / sigma_t per token (0 where sigma_t is 0)."""
    return [
        (lp - mu) / sigma if sigma > 0 else 0.0
        for lp, mu, sigma in zip(logprobs, means, stds, strict=True)
    ]


def min_k_plus_plus(
    logprobs: Sequence[float], means: Sequence[float], stds: Sequence[float], k: float = DEFAULT_K
) -> float:
    return min_k_prob(standardised(logprobs, means, stds), k)


@dataclass(frozen=True)
class LikelihoodSignal:
    """One likelihood signal; subclasses say how the value follows from the log-probs."""

    k: float = DEFAULT_K
    name = "likelihood"
    short = "likelihood"
    description = "likelihood"
    higher_means_memorized = True
    log_scale = False
    plot_distribution = True
    needs_scorer = True
    needs_distribution = False

    def group_summary(self, scores: Sequence[SignalScore]) -> dict:
        return {}

    def settings(self) -> dict:
        return {}

    def value(self, scored: TokenLogProbs, task: TaskInputs) -> float:
        raise NotImplementedError

    def score_tasks(self, tasks: Sequence[TaskInputs]) -> list[SignalScore]:
        # a scorer that cannot give what this signal needs is not asked at all
        asked = [t if self._can_use(t.scorer) else replace(t, scorer=None) for t in tasks]
        scored = score_all(asked)
        return [self._score(task, result) for task, result in zip(tasks, scored, strict=True)]

    def _can_use(self, scorer) -> bool:
        return scorer is not None and (scorer.full_distribution or not self.needs_distribution)

    def _score(self, task: TaskInputs, scored: ScoredText | None) -> SignalScore:
        if task.scorer is None:
            return SignalScore.unavailable(self.name, "no log-prob scorer for this model")
        if not self._can_use(task.scorer):
            return SignalScore.unavailable(
                self.name,
                f"{task.scorer.identity} gives only the chosen tokens' log-probs; Min-K%++ "
                "needs the whole next-token distribution (a local model gives it)",
                scorer=task.scorer.identity,
            )
        if isinstance(scored, Unscored):
            return SignalScore.unavailable(self.name, scored.reason, scorer=task.scorer.identity)
        if scored is None or not scored.logprobs:
            return SignalScore.unavailable(
                self.name, "the canonical solution has no tokens to score",
                scorer=task.scorer.identity,
            )  # fmt: skip
        detail = {"scorer": task.scorer.identity, "tokens": len(scored.logprobs),
                  "mode": task.mode, **self.settings()}  # fmt: skip
        return SignalScore(self.name, self.value(scored, task), None, detail)


def score_all(tasks: Sequence[TaskInputs]) -> list[ScoredText | None]:
    """Each task's canonical scored by its scorer, one batch per scorer (None: no scorer).

    Scorers that cannot score at all say so once, for every text."""
    results: list[ScoredText | None] = [None] * len(tasks)
    by_scorer: dict[int, list[int]] = {}
    for index, task in enumerate(tasks):
        if task.scorer is not None:
            by_scorer.setdefault(id(task.scorer), []).append(index)
    for indices in by_scorer.values():
        scorer = tasks[indices[0]].scorer
        assert scorer is not None
        reason = scorer.unavailable_reason()
        if reason:
            scored: list[ScoredText] = [Unscored(reason)] * len(indices)
        else:
            scored = scorer.score([tasks[i].scoring_text() for i in indices])
        for index, result in zip(indices, scored, strict=True):
            results[index] = result
    return results


@dataclass(frozen=True)
class PerplexitySignal(LikelihoodSignal):
    name = "perplexity"
    short = "ppl"
    description = "perplexity of the canonical solution"
    higher_means_memorized = False
    log_scale = True

    def value(self, scored: TokenLogProbs, task: TaskInputs) -> float:
        return perplexity(scored.logprobs)


@dataclass(frozen=True)
class ZlibSignal(LikelihoodSignal):
    name = "zlib"
    short = "zlib"
    description = "log-likelihood over zlib entropy"

    def value(self, scored: TokenLogProbs, task: TaskInputs) -> float:
        return zlib_ratio(scored.logprobs, task.canonical)


@dataclass(frozen=True)
class MinKSignal(LikelihoodSignal):
    name = "min_k"
    short = "min-k%"
    description = "Min-K% Prob"

    def settings(self) -> dict:
        return {"k": self.k}

    def value(self, scored: TokenLogProbs, task: TaskInputs) -> float:
        return min_k_prob(scored.logprobs, self.k)


@dataclass(frozen=True)
class MinKPlusPlusSignal(LikelihoodSignal):
    name = "min_k_plus_plus"
    short = "min-k%++"
    description = "Min-K%++"
    needs_distribution = True

    def settings(self) -> dict:
        return {"k": self.k}

    def value(self, scored: TokenLogProbs, task: TaskInputs) -> float:
        assert scored.means is not None and scored.stds is not None
        return min_k_plus_plus(scored.logprobs, scored.means, scored.stds, self.k)

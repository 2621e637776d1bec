"""CDD, contamination detection via output distribution (Dong et al. 2024): peakedness.

A model that memorized a task's answer keeps writing it when sampled: its samples at
temperature > 0 pile up near its greedy answer. With s_g the greedy answer, s_1..s_n the
samples, and ED the edit distance in tokens, the peakedness is the share of samples within
alpha * l of the greedy answer, l being the longest of s_g, s_1..s_n in tokens:

    peak = (1/n) * #{i : ED(s_g, s_i) <= alpha * l}

The paper's defaults are alpha = 0.05 and, for calling a task contaminated, peak > xi = 0.01;
`value` is the peakedness, `detail["contaminated"]` the verdict at xi.

Tokens here are code tokens (identifiers, numbers, and single other characters, whitespace
skipped), so layout does not count as a difference.

The greedy answer: a sample of the same model, settings and prompt stored at temperature 0
(the first, if several). When none is stored, the most central sample stands in for it: the
sample whose summed edit distance to the other samples is least (the medoid; lowest index on
ties), and it is then left out of the samples it is compared with. `detail["greedy"]` says
which was used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .base import SignalScore, TaskInputs

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|\S")
DEFAULT_ALPHA = 0.05
DEFAULT_XI = 0.01


def code_tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def peakedness(greedy: Sequence[str], samples: Sequence[Sequence[str]], alpha: float) -> float:
    """Share of token sequences `samples` within alpha * l edits of `greedy`."""
    from rapidfuzz.distance import Levenshtein  # on first use: --help lists signals fast

    longest = max([len(greedy), *(len(s) for s in samples)])
    bound = alpha * longest
    close = sum(1 for s in samples if Levenshtein.distance(greedy, s) <= bound)
    return close / len(samples)


def medoid_index(sequences: Sequence[Sequence[str]]) -> int:
    """The sequence with the least summed edit distance to the others (lowest index on ties)."""
    from rapidfuzz.distance import Levenshtein

    totals = [0] * len(sequences)
    for i in range(len(sequences)):
        for j in range(i + 1, len(sequences)):
            distance = Levenshtein.distance(sequences[i], sequences[j])
            totals[i] += distance
            totals[j] += distance
    return min(range(len(sequences)), key=lambda i: (totals[i], i))


@dataclass(frozen=True)
class CDDSignal:
    alpha: float = DEFAULT_ALPHA
    xi: float = DEFAULT_XI
    name = "cdd"
    short = "cdd"
    description = "output peakedness (CDD)"
    higher_means_memorized = True
    log_scale = False
    plot_distribution = False
    needs_scorer = False

    def settings(self) -> dict:
        return {"alpha": self.alpha, "xi": self.xi}

    def group_summary(self, scores: Sequence[SignalScore]) -> dict:
        return {"tasks_over_xi": sum(1 for s in scores if s.detail.get("contaminated"))}

    def score_tasks(self, tasks: Sequence[TaskInputs]) -> list[SignalScore]:
        return [self.score_task(task) for task in tasks]

    def score_task(self, task: TaskInputs) -> SignalScore:
        if task.temperature == 0:
            return SignalScore.unavailable(
                self.name, "the group is sampled at temperature 0: its samples are the greedy "
                "answer, so there is no spread to measure",
            )  # fmt: skip
        samples = [code_tokens(s) for s in task.samples]
        if task.greedy:
            greedy, source = code_tokens(task.greedy[0]), "temperature 0 sample"
        elif len(samples) >= 3:
            centre = medoid_index(samples)
            greedy, source = samples.pop(centre), f"most central sample (index {centre})"
        else:
            return SignalScore.unavailable(
                self.name, f"{len(samples)} sample(s) and no temperature-0 sample: the most "
                "central sample stands in for the greedy answer only with 3 or more",
            )  # fmt: skip
        if not samples:
            return SignalScore.unavailable(self.name, "no samples at temperature > 0")
        if not greedy and not any(samples):
            return SignalScore.unavailable(self.name, "the greedy answer and samples are empty")
        value = peakedness(greedy, samples, self.alpha)
        detail = {"samples": len(samples), "greedy": source, "alpha": self.alpha,
                  "xi": self.xi, "contaminated": value > self.xi}  # fmt: skip
        return SignalScore(self.name, value, None, detail)

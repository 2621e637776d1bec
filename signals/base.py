"""The one small interface every signal shares: what a signal reads, what it returns.

A signal reads `TaskInputs` (a task's prompt, canonical solution and samples) and, for the
likelihood signals, the token log-probabilities a `LogProbScorer` gives for the canonical
solution as the model would have written it (`ScoringText`). It returns one `SignalScore` per
task: a value with the facts it was computed from, or "not available" with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from ..errors import UserError

Mode = Literal["completion", "chat"]

CHAT_ANSWER_OPENING = "```python\n"
"""How a chat answer opens: the model is asked for the whole function in one python fence."""


class SignalError(UserError):
    """A signal cannot be computed as asked (unknown name, a scorer that cannot score)."""


@dataclass(frozen=True)
class ScoringText:
    """A target text to score after a context, as the model is queried in `mode`.

    Completion mode: the context is `prompt` and the target continues it. Chat mode: the
    context is the chat-rendered user message `prompt` (rendered by the scorer with the
    model's own chat template) followed by `answer_prefix`, the part of the assistant's
    answer before the target.
    """

    prompt: str
    target: str
    mode: Mode = "completion"
    answer_prefix: str = ""


def canonical_scoring_text(
    prompt: str, canonical: str, mode: Mode, user_message: str
) -> ScoringText:
    """How the canonical solution is scored: the body, after the prompt as the model saw it.

    Completion mode: context = the prompt, target = the canonical body. Chat mode: context =
    the chat-rendered `user_message` (the instruction the audit sends, holding the prompt),
    then the answer's opening fence and the prompt (signature and docstring, which the answer
    repeats), target = the canonical body. Only the body is scored in both modes: the
    prompt's own tokens never count.
    """
    if mode == "chat":
        return ScoringText(user_message, canonical, "chat", CHAT_ANSWER_OPENING + prompt)
    return ScoringText(prompt, canonical, "completion")


@dataclass(frozen=True)
class TokenLogProbs:
    """Log-probabilities of the target's tokens, each given everything before it.

    `means` and `stds` (when the scorer sees the whole next-token distribution) are the mean
    and standard deviation of log p(z) for z drawn from the model's distribution at that
    position: E_z[log p(z)] and sqrt(E_z[(log p(z))^2] - E_z[log p(z)]^2).
    """

    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]
    means: tuple[float, ...] | None = None
    stds: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        lengths = {len(self.tokens), len(self.logprobs)}
        if self.means is not None:
            lengths |= {len(self.means), len(self.stds or ())}
        if len(lengths) != 1:
            raise ValueError(f"token log-prob fields of unequal lengths {sorted(lengths)}")


@dataclass(frozen=True)
class Unscored:
    """A text the scorer could not score, and why."""

    reason: str


ScoredText = TokenLogProbs | Unscored


@runtime_checkable
class LogProbScorer(Protocol):
    """Anything that gives the token log-probabilities of targets after their contexts."""

    identity: str
    """The model and scoring path, e.g. `hf:/models/x` or `openai:m@http://host/v1 (echo)`;
    part of every stored score's key."""
    full_distribution: bool
    """Whether `means` and `stds` are given (Min-K%++ needs them)."""

    def unavailable_reason(self) -> str | None:
        """None when the scorer can score; else why not (a capability check)."""

    def score(self, texts: Sequence[ScoringText]) -> list[ScoredText]:
        """One result per text, in order."""


@dataclass(frozen=True)
class TaskInputs:
    """What the signals know of one task in one group (model, prompt set, temperature)."""

    task_id: str
    prompt: str
    """The prompt as the model got it (completion prompt, or the prompt inside the chat
    instruction)."""
    canonical: str
    """The canonical solution's body, as the benchmark gives it."""
    canonical_function: str = ""
    """The canonical as a whole function (signature and body, no docstring or comments):
    what surface similarity compares samples with."""
    samples: tuple[str, ...] = ()
    """The group's sample programs (temperature > 0 unless the group is greedy)."""
    greedy: tuple[str, ...] = ()
    """Sample programs of the same model, settings and prompt at temperature 0, if stored."""
    temperature: float | None = None
    mode: Mode = "completion"
    user_message: str = ""
    """Chat mode: the message the model was sent."""
    scorer: LogProbScorer | None = None

    def scoring_text(self) -> ScoringText:
        return canonical_scoring_text(self.prompt, self.canonical, self.mode, self.user_message)


@dataclass(frozen=True)
class SignalScore:
    """One signal's score of one task: a value, or not available with the reason."""

    signal: str
    value: float | None
    reason: str | None = None
    """Why there is no value (None when there is one)."""
    detail: dict = field(default_factory=dict, compare=False)
    """What the value was computed from (token counts, k, samples, the greedy answer's
    source, the scorer)."""

    @property
    def available(self) -> bool:
        return self.value is not None

    @classmethod
    def unavailable(cls, signal: str, reason: str, **detail) -> SignalScore:
        return cls(signal, None, reason, dict(detail))

    def to_dict(self) -> dict:
        return {"value": self.value, "available": self.available, "reason": self.reason,
                "detail": self.detail}  # fmt: skip


class Signal(Protocol):
    """A memorization signal: per-task scores for a batch of tasks."""

    name: str
    """The name users give (`--signals min_k`) and reports key by."""
    short: str
    """The column label in tables (`min-k%`)."""
    description: str
    """One phrase for help texts."""
    higher_means_memorized: bool
    """The direction of evidence: True when a higher value is more memorization-like."""
    log_scale: bool
    """Shown on a log10 axis, and compared with a reference on the log scale (perplexity)."""
    plot_distribution: bool
    """Whether reports plot its per-task values (not for near-binary signals such as CDD's)."""
    needs_scorer: bool

    def settings(self) -> dict:
        """The parameters a stored score is keyed by."""

    def score_tasks(self, tasks: Sequence[TaskInputs]) -> list[SignalScore]: ...

    def group_summary(self, scores: Sequence[SignalScore]) -> dict:
        """What a group's summary adds for this signal beyond count, mean and median (CDD:
        tasks over its threshold; surface: the distribution over samples); {} for none."""

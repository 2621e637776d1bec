"""Typed settings of the audit's stages: what a command parses its options into.

Each is a frozen value with the defaults the commands document, so the pipeline can be called
from Python as well as from the command line.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .benchmarks.registry import DEFAULT_BENCHMARK
from .errors import UserError
from .generation import DEFAULT_STORE

if TYPE_CHECKING:
    from .execution import Limits


@dataclass(frozen=True)
class GenerationSettings:
    """What to sample: models x temperatures x prompt sets x tasks, n each, and how."""

    models: tuple[str, ...] = ("embedded",)
    temperatures: tuple[float, ...] = (0.2,)
    n: int = 20
    prompts: str = "original,fixed"
    """Comma-separated prompt sets: original, fixed, or paths."""
    benchmark: str = DEFAULT_BENCHMARK
    limit: int | None = None
    tasks: str | None = None
    store: Path = Path(DEFAULT_STORE)
    mode: str | None = None
    """completion or chat; None: the backend's default."""
    top_p: float = 0.95
    max_new_tokens: int = 512
    stops: tuple[str, ...] = ()
    """Empty: HumanEval's stop sequences in completion mode."""
    seed: int | None = None
    base_url: str | None = None
    concurrency: int = 16
    timeout: float = 120.0
    batch_size: int = 16
    dtype: str = "auto"
    """Local models: auto (bfloat16 on a CPU with native bfloat16, else float32), float32 or
    bfloat16."""
    recorded: dict = field(default_factory=dict, compare=False)
    """The resolved command-line configuration, kept with each run in the store (credentials
    removed before it is stored)."""
    api_key: str | None = field(default=None, repr=False, compare=False)
    """The API key (from --api-key-file; else OPENAI_API_KEY is read). Never stored."""


@dataclass(frozen=True)
class ExecutionSettings:
    """Running samples against their tests in the sandbox."""

    workers: int = 2
    timeout: float = 10.0
    """Wall-clock seconds per sample's tests."""
    cpu_seconds: int | None = None
    """CPU seconds of a whole sample (all its processes together) and of each of its
    processes; None: the timeout rounded up, at least 10."""

    @property
    def limits(self) -> Limits:
        from .execution import Limits  # on first use: --help reads these defaults fast

        cpu = self.cpu_seconds or max(10, math.ceil(self.timeout))
        return Limits(timeout=self.timeout, cpu_seconds=cpu)


@dataclass(frozen=True)
class SampleSource:
    """Where `detect`, `execute` and `report` read samples: a store, optionally filled first
    from sample files, with the defaults for what a file does not say."""

    store: Path = Path(DEFAULT_STORE)
    files: tuple[Path, ...] = ()
    model: str | None = None
    temperature: float | None = None
    prompt_set: str = "original"
    benchmark: str = DEFAULT_BENCHMARK
    models: tuple[str, ...] = ()
    """Only these models (empty: all)."""
    max_sample_bytes: int = 1_000_000
    """A sample in a file larger than this is refused before it is parsed."""
    prompt_sets: tuple[str, ...] = ()
    """Only these prompt sets (empty: all)."""
    as_written: bool = False
    """Files are scored exactly as given (no repair)."""


@dataclass(frozen=True)
class SignalSettings:
    """Which memorization signals to compute, and how to reach the models' log-probs."""

    names: tuple[str, ...] = ()
    """Signal names (empty: every signal)."""
    reference_model: str | None = None
    """A model spec whose likelihoods the audited model's are compared with."""
    base_url: str | None = None
    batch_size: int = 4
    """Texts per forward pass when a local model scores."""
    concurrency: int = 8
    timeout: float = 120.0


class FineTuneError(UserError):
    """The model cannot be fine-tuned this way (its layout, or the settings); a user error."""


@dataclass(frozen=True)
class FineTuneSettings:
    top_layers: int = 4
    """Decoder layers trained, counted from the top."""
    learning_rate: float = 3e-4
    seed: int = 0
    """Order of the texts in each epoch."""
    max_tokens: int = 1024
    """Texts longer than this are cut from the left (the answer is kept)."""

    def __post_init__(self) -> None:
        if self.top_layers < 1:
            raise FineTuneError(f"--top-layers {self.top_layers}: give 1 or more (the top "
                                "decoder layers that learn)")  # fmt: skip
        if not self.learning_rate > 0:
            raise FineTuneError(f"--learning-rate {self.learning_rate}: give a positive number, "
                                "the default is 3e-4")  # fmt: skip


DEFAULT_DOSES = (("light", 1), ("heavy", 8))
ANSWER_ROOM = 16
"""Tokens a fitted control budget leaves beyond the longest taught answer."""


CONTROL_PROMPTS = ("original", "disguised")
"""The prompt sets the positive control samples by default."""


@dataclass(frozen=True)
class ControlSettings:
    model: str = "embedded"
    """`embedded`, `hf:<folder>` or a folder holding a transformers model."""
    benchmark: str = DEFAULT_BENCHMARK
    seed: int = 0
    """Decides the split (and the sampling seed)."""
    limit: int | None = None
    """Only the first K tasks (split the same way)."""
    doses: tuple[tuple[str, int], ...] = DEFAULT_DOSES
    """(name, epochs) of each fine-tuned model."""
    finetune: FineTuneSettings = field(default_factory=FineTuneSettings)
    n: int = 2
    temperature: float = 0.8
    max_new_tokens: int | None = None
    """Tokens per sample at most; None: fitted, the longest answer the doses are taught plus
    `ANSWER_ROOM` (in chat mode the answer restates the prompt, so a fixed budget would cut
    most bodies and measure the budget, not the detector)."""
    mode: str | None = None
    """chat or completion; None: chat when the tokenizer has a chat template."""
    signals: tuple[str, ...] = ()
    """Signal names (empty: every signal)."""
    batch_size: int = 16
    resamples: int = 1000
    output: Path = Path("cloneprobe-control")
    prompts: tuple[str, ...] | None = None
    """Prompt sets sampled: original (what the doses are taught; the verdicts are its) and
    disguised (the model-specific convergence null: does the model write the canonical when
    the prompt's names are changed?). None: both where the benchmark has a disguised set."""

    def __post_init__(self) -> None:
        if self.n < 1:
            raise UserError(f"-n {self.n}: at least one sample per task; give -n 1 or more")
        if not self.doses:
            raise UserError("no doses: give at least one, e.g. --dose light=1")
        given = self.prompts
        if given is not None and ("original" not in given
                                  or any(p not in CONTROL_PROMPTS for p in given)):
            raise UserError(
                f"--prompts {','.join(given)}: the control samples original (what the "
                "doses are taught) and optionally disguised; give --prompts original or "
                "--prompts original,disguised"
            )

    def fingerprint(self) -> str:
        """What decides the fine-tuned models (their labels in the store carry it)."""
        decided = {
            "model": self.model, "benchmark": self.benchmark, "seed": self.seed,
            "limit": self.limit, "finetune": asdict(self.finetune), "mode": self.mode,
        }  # fmt: skip
        return hashlib.sha256(json.dumps(decided, sort_keys=True).encode()).hexdigest()[:8]

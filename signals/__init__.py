"""cloneprobe.signals: memorization signals beside the clone verdicts, one module per signal.

likelihood (perplexity, zlib ratio, Min-K% Prob, Min-K%++) reads token log-probabilities
through a `LogProbScorer`; CDD (output peakedness) and surface similarity read samples only.
Every signal returns a `SignalScore` per task: a number with what it was computed from, or
"not available" with the reason, never a made-up number.

Knows tasks' texts and samples' texts; knows nothing of clone detection, stores or HumanEval.
Names are imported on first use (lazy_loader).
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "base": [
            "LogProbScorer", "ScoredText", "ScoringText", "Signal", "SignalError",
            "SignalScore", "TaskInputs", "TokenLogProbs",
        ],
        "registry": ["SIGNALS", "LIKELIHOOD_SIGNALS", "SAMPLE_SIGNALS", "get_signal",
                     "parse_signal_names"],
        "relative": ["relative_scores", "original_vs_fixed", "target_vs_reference"],
        "store": ["SignalStore"],
    },
)  # fmt: skip

"""cloneprobe.signals: memorization signals beside the clone verdicts, one module per signal.

likelihood (perplexity, zlib ratio, Min-K% Prob, Min-K%++) reads token log-probabilities
through a `LogProbScorer`; CDD (output peakedness) and surface similarity read samples only.
Every signal returns a `SignalScore` per task: a number with what it was computed from, or
"not available" with the reason, never a made-up number.

Knows tasks' texts and samples' texts; knows nothing of clone detection, stores or HumanEval.
Names are imported on first use (lazy_loader), declared in `__init__.pyi`, which lazy_loader
reads at run time and type checkers read as the package's interface.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)

"""Names of the package, loaded on first use (lazy_loader reads this stub at run time;
type checkers read it as the package's interface)."""

from .base import (
    LogProbScorer as LogProbScorer,
)
from .base import (
    ScoredText as ScoredText,
)
from .base import (
    ScoringText as ScoringText,
)
from .base import (
    Signal as Signal,
)
from .base import (
    SignalError as SignalError,
)
from .base import (
    SignalScore as SignalScore,
)
from .base import (
    TaskInputs as TaskInputs,
)
from .base import (
    TokenLogProbs as TokenLogProbs,
)
from .registry import (
    LIKELIHOOD_SIGNALS as LIKELIHOOD_SIGNALS,
)
from .registry import (
    SAMPLE_SIGNALS as SAMPLE_SIGNALS,
)
from .registry import (
    SIGNALS as SIGNALS,
)
from .registry import (
    get_signal as get_signal,
)
from .registry import (
    parse_signal_names as parse_signal_names,
)
from .relative import (
    original_vs_fixed as original_vs_fixed,
)
from .relative import (
    relative_scores as relative_scores,
)
from .relative import (
    target_vs_reference as target_vs_reference,
)
from .store import SignalStore as SignalStore

__all__ = [
    "LIKELIHOOD_SIGNALS",
    "SAMPLE_SIGNALS",
    "SIGNALS",
    "LogProbScorer",
    "ScoredText",
    "ScoringText",
    "Signal",
    "SignalError",
    "SignalScore",
    "SignalStore",
    "TaskInputs",
    "TokenLogProbs",
    "get_signal",
    "original_vs_fixed",
    "parse_signal_names",
    "relative_scores",
    "target_vs_reference",
]

"""Running samples against their tasks' tests in a sandbox, and pass@k.

`Sandbox` runs one program in a separate, limited process (`Limits` in, `RunResult` out; the
child runs `guard.py`); `passk` runs samples against tests, keeps the results beside the
samples and computes pass@k.
"""

from .passk import (
    KS,
    Execution,
    ExecutionStore,
    correctness_summary,
    execute_samples,
    execution_key,
    pass_at_k,
    program_with_tests,
)
from .sandbox import Limits, RunResult, Sandbox, run_python

__all__ = [
    "KS",
    "Execution",
    "ExecutionStore",
    "Limits",
    "RunResult",
    "Sandbox",
    "correctness_summary",
    "execute_samples",
    "execution_key",
    "pass_at_k",
    "program_with_tests",
    "run_python",
]

"""Running samples against their tasks' tests in a sandbox, and pass@k.

`Sandbox` runs one program, or judges it against a task's tests, in a separate, confined
process (`Limits` in, `RunResult` out, saying which isolation ran; the child is forked by
`guard.py`'s fork server, confines itself with `confine.py` and `seccomp.py`, and talks to the
sample's process through `wire.py`; `runs.py` is the tool's side of a run, `cgroups.py`
limits a whole sample);
`passk` runs samples against tests, keeps the results beside the samples and computes pass@k.
"""

from .passk import (
    KS,
    Execution,
    ExecutionStore,
    correctness_summary,
    execute_samples,
    execution_key,
    pass_at_k,
    task_execution_key,
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
    "run_python",
    "task_execution_key",
]

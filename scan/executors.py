"""Where the scan runs: datatrove's local, Slurm or Ray executor, built from settings.

The pipeline is the same for all three; only the executor differs. Each rank leaves a
completion marker in `OUTPUT/datatrove/completions`, so running the same command again
re-runs only the ranks that did not finish.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from .errors import ScanError

EXECUTORS = ("local", "slurm", "ray")


@dataclass(frozen=True)
class ExecutorSettings:
    kind: str = "local"
    workers: int = 0
    """Ranks run at once (0: the machine's cores for local, unlimited on a cluster)."""
    tasks: int = 0
    """Ranks (shards of the corpus); 0: chosen from the workers and the number of files."""
    partition: str | None = None
    time: str = "24:00:00"
    cpus_per_task: int = 1
    mem_per_cpu_gb: float = 2
    job_name: str = "cloneprobe-scan"
    env_command: str | None = None
    """Shell line a Slurm job runs first (e.g. `source /path/venv/bin/activate`)."""
    ray_address: str | None = None
    """A running Ray cluster (`auto`, `ray://host:10001`); None starts a local one."""


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def local_start_method() -> str:
    """fork on Linux, not datatrove's default forkserver: a forked worker starts with the
    parent's imports and benchmark index (otherwise about 1 s of imports per worker; runner.py
    keeps its progress thread out of the way while the pool forks). Elsewhere (macOS, where
    forking a process that has loaded system frameworks is unsafe) datatrove's default."""
    return "fork" if sys.platform.startswith("linux") else "forkserver"


def build_executor(pipeline: list, settings: ExecutorSettings, logging_dir: str, tasks: int):
    """The datatrove executor for the pipeline (imports datatrove, and ray for `ray`)."""
    if settings.kind == "local":
        from datatrove.executor import LocalPipelineExecutor

        workers = settings.workers or default_workers()
        return LocalPipelineExecutor(
            pipeline, tasks=tasks, workers=min(workers, tasks), logging_dir=logging_dir,
            start_method=local_start_method(),
        )
    if settings.kind == "slurm":
        from datatrove.executor import SlurmPipelineExecutor

        if not settings.partition:
            raise ScanError("--executor slurm needs --partition (the Slurm partition to use)")
        return SlurmPipelineExecutor(
            pipeline, tasks=tasks, workers=settings.workers or -1, time=settings.time,
            partition=settings.partition, cpus_per_task=settings.cpus_per_task,
            mem_per_cpu_gb=settings.mem_per_cpu_gb, job_name=settings.job_name,
            env_command=settings.env_command, logging_dir=logging_dir,
        )  # fmt: skip
    if settings.kind == "ray":
        try:
            import ray
        except ImportError as error:
            raise ScanError(
                "--executor ray needs Ray: pip install 'cloneprobe[ray]'"
            ) from error
        from datatrove.executor import RayPipelineExecutor

        if not ray.is_initialized():
            if settings.ray_address:
                ray.init(address=settings.ray_address, log_to_driver=False)
            else:
                ray.init(num_cpus=settings.workers or default_workers(), log_to_driver=False,
                         include_dashboard=False)  # fmt: skip
        return RayPipelineExecutor(
            pipeline, tasks=tasks, workers=settings.workers or -1, logging_dir=logging_dir,
            cpus_per_task=settings.cpus_per_task, mem_per_cpu_gb=settings.mem_per_cpu_gb,
        )  # fmt: skip
    raise ScanError(f"executor {settings.kind!r}: choose one of {', '.join(EXECUTORS)}")

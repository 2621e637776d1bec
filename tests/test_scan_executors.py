"""Settings to datatrove executors: the Slurm job script a cluster would run, and what a
cluster executor needs to be told."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from scan_corpora import planted_corpus, write_files

from cloneprobe.cli import main
from cloneprobe.scan.executors import ExecutorSettings, build_executor


def test_slurm_settings_reach_the_job_script(tmp_path):
    settings = ExecutorSettings(kind="slurm", partition="cpu", time="02:00:00", cpus_per_task=2,
                                mem_per_cpu_gb=3, env_command="source /opt/venv/bin/activate",
                                workers=50)  # fmt: skip
    executor = build_executor([], settings, str(tmp_path / "logs"), tasks=400)
    script = executor.get_launch_file_contents(executor.get_sbatch_args(400), "run-the-pipeline")
    for line in ("#SBATCH --partition=cpu", "#SBATCH --time=02:00:00",
                 "#SBATCH --cpus-per-task=2", "#SBATCH --mem-per-cpu=3G",
                 "#SBATCH --array=0-399%50", "source /opt/venv/bin/activate"):  # fmt: skip
        assert line in script
    assert executor.world_size == 400


def test_slurm_without_a_partition_is_one_error(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.py").write_text("x = 1\n")
    result = CliRunner().invoke(main, ["scan", str(tmp_path / "c"), "--output",
                                       str(tmp_path / "o"), "--executor", "slurm"])  # fmt: skip
    assert result.exit_code == 2 and "--partition" in result.stderr


def test_local_executor_uses_the_workers_and_never_more_than_the_ranks(tmp_path):
    executor = build_executor([], ExecutorSettings(workers=8), str(tmp_path), tasks=3)
    assert (executor.workers, executor.world_size) == (3, 3)


def test_the_command_on_two_forked_workers_finds_what_one_worker_finds(tmp_path):
    docs, plants = planted_corpus(count=8, per_kind=1)
    corpus = write_files(tmp_path / "corpus", docs)

    def arguments(workers: int) -> list[str]:
        return ["scan", str(corpus), "--output", str(tmp_path / f"out-{workers}"), "--workers",
                str(workers), "--ranks", "4", "--json"]  # fmt: skip

    command = [sys.executable, "-m", "cloneprobe", *arguments(2)]  # forks: a real process
    forked = json.loads(subprocess.run(command, capture_output=True, text=True, timeout=120,
                                       check=True).stdout)  # fmt: skip
    done = CliRunner().invoke(main, arguments(1))  # one worker, in-process: the reference
    assert done.exit_code == 0, done.output
    alone = json.loads(done.stdout)
    assert forked["matches"] == alone["matches"] and forked["throughput"]["ranks_run"] == 4
    assert {task for _, task, _ in plants} <= {m["task_id"] for m in forked["matches"]}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_scan_worker_dies_of_sigterm_whatever_handler_the_command_set():
    # the CLI turns SIGTERM into KeyboardInterrupt; a forked worker that kept such a handler
    # could miss the pool's SIGTERM at the end of a scan (it went to another thread) and hang
    import cloneprobe.scan.runner  # noqa: F401  (registers what a forked worker starts with)

    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        pid = os.fork()
        if pid == 0:  # the worker: SIGTERM must end it
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM

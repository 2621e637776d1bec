"""Settings to datatrove executors: the Slurm job script a cluster would run, and what a
cluster executor needs to be told."""

from __future__ import annotations

from click.testing import CliRunner

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

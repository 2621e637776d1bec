"""The cost of two checks on inputs, each against its baseline in the same run (alternated,
best of several rounds), printed as ratios:

- reading every sample of a store (32,800 samples) with and without the per-row type check
  (a blob where code belongs is named instead of failing deep in the detector);
- parsing a JSONL sample file (32,800 lines) with and without the duplicate-key check (a
  regex count of where keys may end, and a second parse only when it exceeds the keys).

    PYTHONPATH=. python3 perf/input_checks.py
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from cloneprobe.benchmarks import tasks as tasks_module
from cloneprobe.generation import SampleStore
from cloneprobe.generation import store as store_module
from cloneprobe.generation.store import StoredSample

LINES = 32_800


class _NoKeys:
    """Stands in for the key pattern: no line looks as if it held a key twice."""

    @staticmethod
    def findall(line: str) -> tuple:
        return ()


def best(function, rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def unchecked_samples(store: SampleStore):
    fields = ", ".join(StoredSample.__dataclass_fields__)
    for row in store.db.execute(f"SELECT {fields} FROM samples WHERE error IS NULL ORDER BY "
                                "model, prompt_set, variant, temperature, task_id, "
                                "sample_index"):  # fmt: skip
        yield StoredSample(*row)


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    records = [{"task_id": f"HumanEval/{i % 164}", "sample": i // 164,
                "completion": "    return sorted(set(l))\n" * 4} for i in range(LINES)]  # fmt: skip
    text = "".join(json.dumps(r) + "\n" for r in records)
    store_path = folder / "s.sqlite"
    with SampleStore(store_path) as store:
        run = store.start_run("m", {}, {})
        store.add([StoredSample("m", "k", "original", "original", r["task_id"], 0.2,
                                r["sample"], raw=r["completion"], completion=r["completion"],
                                program=r["completion"], run_id=run) for r in records])
        store.end_run(run)
    with SampleStore(store_path, read_only=True) as store:
        checked, plain = [], []
        for _ in range(3):
            checked.append(best(lambda: sum(1 for _ in store.samples()), 2))
            plain.append(best(lambda: sum(1 for _ in unchecked_samples(store)), 2))
    print(f"store read, {LINES} samples: checked {min(checked):.3f} s, unchecked "
          f"{min(plain):.3f} s, ratio {min(checked) / min(plain):.2f}")
    with_check, without = [], []
    key = tasks_module._KEY
    for _ in range(3):
        tasks_module._KEY = key
        with_check.append(best(lambda: list(tasks_module.parse_jsonl(text, "s.jsonl")), 2))
        tasks_module._KEY = _NoKeys()  # the check never runs
        without.append(best(lambda: list(tasks_module.parse_jsonl(text, "s.jsonl")), 2))
    tasks_module._KEY = key
    print(f"JSONL parse, {LINES} lines: with the duplicate-key check {min(with_check):.3f} s, "
          f"without {min(without):.3f} s, ratio {min(with_check) / min(without):.2f}")
    assert store_module  # the module whose check is measured


if __name__ == "__main__":
    main()

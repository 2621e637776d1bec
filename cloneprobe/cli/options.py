"""Option groups shared by commands, config files, and turning options into typed settings.

Only click and the registries the choices come from are imported here: this module is loaded
for `cloneprobe --help`, which must start fast.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from ..clones.languages import LANGUAGES
from ..clones.profiles import PROFILES
from ..clones.types import CLONE_TYPES
from ..generation.errors import GenerationError
from ..generation.store import DEFAULT_STORE
from .checks import EXEC_SECONDS, SECONDS, TEMPERATURE, THRESHOLD, TOP_P


def apply(options: list[Callable]) -> Callable:
    """One decorator applying `options` in the order listed (as they show in --help)."""

    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


# --- config files: click's default_map --------------------------------------------------------

CONFIG_ALIASES = {"model": "models", "temperature": "temperatures", "prompts": "prompts_spec",
                  "benchmark": "benchmark_spec", "store": "store_path", "report": "report_dir",
                  "type": "type_name", "stop": "stops", "json": "as_json",
                  "signals": "signal_names"}  # fmt: skip
"""Config keys named as the flags are, mapped to the option's parameter name."""


def _load_config(ctx: click.Context, param: click.Parameter, path: Path | None) -> Path | None:
    """Fill the command's defaults from the `[audit]` table of a TOML file (flags given on the
    command line still win; values get the same conversions and range checks as the flags)."""
    if path is None:
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise GenerationError(
            f"{path}: cannot read the config ({error}); give a TOML file with an [audit] table"
        ) from error
    table = data.get(ctx.info_name, data)
    names = {p.name: p for p in ctx.command.params if p.name != param.name}
    defaults = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        name = CONFIG_ALIASES.get(name, name)
        if name not in names:
            raise GenerationError(
                f"{path}: unknown setting {key!r}; settings are the flags of "
                f"`cloneprobe {ctx.info_name} --help`"
            )
        if getattr(names[name], "multiple", False) and not isinstance(value, list):
            value = [value]
        if name == "prompts_spec" and isinstance(value, list):
            value = ",".join(value)
        defaults[name] = value
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    return path


config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    is_eager=True,
    expose_value=False,
    callback=_load_config,
    help="A TOML file whose [audit] table holds any of these options (flags still win).",
)


# --- option groups ---------------------------------------------------------------------------

generation_options = apply([
    click.option("--model", "models", multiple=True, metavar="SPEC",
                 help="openai:<model>, hf:<path or cached id>, or embedded (default). "
                 "Repeat for several models."),
    click.option("--temperature", "temperatures", multiple=True, type=TEMPERATURE,
                 help="Sampling temperature; repeat for a grid (default 0.2)."),
    click.option("-n", "n", type=click.IntRange(min=1), default=None,
                 help="Samples per task, prompt variant and temperature (default 20)."),
    click.option("--prompts", "prompts_spec", default=None, metavar="SETS",
                 help="Comma-separated prompt sets: original, fixed, or paths "
                 "(default original,fixed)."),
    click.option("--benchmark", "benchmark_spec", default="humaneval", show_default=True,
                 metavar="humaneval|FILE.jsonl", help="The tasks."),
    click.option("--limit", type=click.IntRange(min=1), help="Only the first K tasks."),
    click.option("--tasks", metavar="IDS", help="Only these tasks, e.g. 0,5,HumanEval/7."),
    click.option("--store", "store_path", type=click.Path(path_type=Path),
                 default=DEFAULT_STORE, show_default=True, help="The SQLite sample store."),
    click.option("--mode", type=click.Choice(["completion", "chat"]),
                 help="completion: continue the prompt; chat: ask for the function and "
                 "take the fenced code (default: chat for a local model whose tokenizer has a "
                 "chat template, e.g. embedded; completion otherwise)."),
    click.option("--top-p", type=TOP_P, default=0.95, show_default=True),
    click.option("--max-new-tokens", type=click.IntRange(min=1), default=512,
                 show_default=True),
    click.option("--stop", "stops", multiple=True,
                 help="Stop sequence (repeat); default HumanEval's \\ndef \\nclass \\nif "
                 "\\nprint \\n#, in completion mode."),
    click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1), help="Seed for sampling."),
    click.option("--base-url", envvar="OPENAI_BASE_URL",
                 help="OpenAI-compatible server, e.g. http://localhost:8000/v1 (vLLM). "
                 "Credentials in it are used but never stored or printed."),
    click.option("--api-key-file", type=click.Path(path_type=Path, dir_okay=False),
                 help="A file holding the API key (else OPENAI_API_KEY; never a flag)."),
    click.option("--concurrency", type=click.IntRange(min=1), default=16, show_default=True,
                 help="API requests in flight."),
    click.option("--timeout", type=SECONDS, default=120.0, show_default=True,
                 help="Seconds per API request."),
    click.option("--batch-size", type=click.IntRange(min=1), default=16, show_default=True,
                 help="Sequences per forward pass for local models."),
    click.option("--dtype", type=click.Choice(["auto", "float32", "bfloat16"]), default="auto",
                 show_default=True,
                 help="What local models compute in; auto: bfloat16 on a CPU with native "
                 "bfloat16 (avx512_bf16, amx_bf16), else float32. Recorded with the run."),
])  # fmt: skip
"""What to generate and how: `generate` and `audit`."""

TYPE_CHOICES = list(CLONE_TYPES)

_detector_options = [
    click.option("--profile", type=click.Choice(sorted(PROFILES)), default="default",
                 show_default=True,
                 help="default: token LCS over bodies, sees short functions; "
                 "nicad: NiCad's line-based semantics exactly."),
    click.option("--type", "type_name", type=click.Choice(TYPE_CHOICES),
                 help="Run one clone type only (1: exact; 2: blind-renamed exact; 2c: "
                 "consistently renamed exact; 3: blind-renamed, 30% difference; 3-2c: "
                 "consistent, 30%). Default: 1, 2 and 3, each pair labelled with the most "
                 "specific."),
    click.option("--threshold", type=THRESHOLD,
                 help="Difference threshold (0 exact, 0.3 Type-3); overrides the type's."),
    click.option("--rename", type=click.Choice(["none", "blind", "consistent"]),
                 help="Identifier renaming; overrides the type's."),
    click.option("--min-lines", type=click.IntRange(min=0),
                 help="Drop fragments under this many pretty-printed lines "
                 "(profile default: nicad 10, default 2)."),
    click.option("--max-lines", type=click.IntRange(min=1),
                 help="Drop fragments over this many pretty-printed lines (default 2500)."),
    click.option("--min-tokens", type=click.IntRange(min=0),
                 help="Report pairs under this many body tokens as trivial "
                 "(default profile: 12)."),
]  # fmt: skip
_file_options = [
    click.option("--lang", type=click.Choice(sorted(LANGUAGES)),
                 help="Source language (default: from file extensions)."),
    click.option("--granularity", type=click.Choice(["functions", "files"]),
                 default="functions", show_default=True,
                 help="Fragments are functions, or whole files."),
]  # fmt: skip
detector_options = apply(_detector_options)
"""The detector's settings, for the commands that detect in samples (the benchmark decides
the language and granularity)."""
clone_detector_options = apply(_detector_options + _file_options)
"""The detector's settings for `cloneprobe clones` on any two systems."""

report_options = apply([
    click.option("--cross-task", is_flag=True,
                 help="Compare each sample with every task's canonical, not only its own."),
    click.option("--report", "report_dir", type=click.Path(path_type=Path, file_okay=False),
                 help="Write report.json, groups.csv, comparisons.csv, report.md, "
                 "table6.tex and report.html into this folder."),
    click.option("--json", "as_json", is_flag=True, help="Print the report as JSON only."),
    click.option("--evidence", is_flag=True,
                 help="Print every clone pair's compared lines side by side."),
    click.option("--reference-solutions", type=click.Path(path_type=Path, dir_okay=False),
                 metavar="FILE.jsonl",
                 help="Independent solutions of the tasks (task_id with solution or "
                 "completion): a verdict they reach is not evidence of memorization."),
    click.option("--contamination", "contamination_dir",
                 type=click.Path(path_type=Path, file_okay=False),
                 help="A `cloneprobe scan` output folder: split pass@k and the clone evidence "
                 "into tasks found in that corpus and tasks not found, with a test of the "
                 "difference."),
])  # fmt: skip
"""How the audit's report is given."""

_execution_options = [
    click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
                 help="Sandboxed processes at once."),
    click.option("--exec-timeout", type=EXEC_SECONDS, default=10.0,
                 show_default=True, help="Wall-clock seconds per sample's tests."),
]  # fmt: skip
execution_options = apply([
    click.option("--execute", is_flag=True,
                 help="Also run each sample against its task's tests in the sandbox "
                 "and report pass@k beside the clone counts."),
    *_execution_options,
])  # fmt: skip
"""--execute, --workers, --exec-timeout."""
always_execution_options = apply(_execution_options)
"""--workers and --exec-timeout, for `execute` (which always executes)."""

max_sample_bytes_option = click.option(
    "--max-sample-bytes", type=click.IntRange(min=1), default=1_000_000, show_default=True,
    help="Refuse a sample in a file larger than this, before parsing it.")

sample_source_options = apply([
    click.argument("inputs", nargs=-1, type=click.Path(path_type=Path)),
    click.option("--store", "store_path", type=click.Path(path_type=Path),
                 default=DEFAULT_STORE, show_default=True,
                 help="Store to read, or to import sample files into."),
    click.option("--model", help="Model name, when a sample file does not say."),
    click.option("--temperature", type=TEMPERATURE,
                 help="Temperature, when a sample file does not say."),
    click.option("--prompt-set", default="original", show_default=True,
                 help="Prompt set the samples answer, when a sample file does not say."),
    click.option("--benchmark", "benchmark_spec", default="humaneval", show_default=True),
    max_sample_bytes_option,
])  # fmt: skip
"""Where samples come from: a store, or sample files imported into --store."""


# --- from options to typed settings ----------------------------------------------------------


def recorded_options(options: dict) -> dict:
    """The resolved options as the store keeps them with a run (paths as text, credentials
    out of the base URL)."""
    from ..generation.secrets import redact_url

    recorded = {k: (str(v) if isinstance(v, Path) else v) for k, v in options.items()}
    if recorded.get("base_url"):
        recorded["base_url"] = redact_url(recorded["base_url"])
    return recorded


def generation_settings(options: dict):
    from ..settings import GenerationSettings
    from .checks import read_api_key_file

    return GenerationSettings(
        models=tuple(options["models"]) or ("embedded",),
        temperatures=tuple(options["temperatures"]) or (0.2,),
        n=20 if options["n"] is None else options["n"],
        prompts=options["prompts_spec"] or "original,fixed",
        benchmark=options["benchmark_spec"],
        limit=options["limit"],
        tasks=options["tasks"],
        store=Path(options["store_path"]),
        mode=options["mode"],
        top_p=options["top_p"],
        max_new_tokens=options["max_new_tokens"],
        stops=tuple(options["stops"]),
        seed=options["seed"],
        base_url=options["base_url"],
        concurrency=options["concurrency"],
        timeout=options["timeout"],
        batch_size=options["batch_size"],
        dtype=options.get("dtype") or "auto",
        recorded=recorded_options(options),
        api_key=read_api_key_file(options.get("api_key_file")),
    )


def detector_config(options: dict):
    """The clone detector's configuration from the detector options."""
    from ..clones import ConfigError, DetectorConfig, choose_types, get_profile

    try:
        return DetectorConfig(
            profile=get_profile(options["profile"]),
            types=choose_types(options["type_name"], options["threshold"], options["rename"]),
            granularity=options.get("granularity", "functions"),
            language=options.get("lang"),
            min_lines=options["min_lines"],
            max_lines=options["max_lines"],
            min_tokens=options["min_tokens"],
        )
    except ValueError as error:
        raise ConfigError(str(error)) from error


def detection_settings(options: dict):
    from cloneprobe.audit.detection import DetectionSettings

    return DetectionSettings(
        detector_config(options),
        cross_task=options["cross_task"],
        reference_solutions=options.get("reference_solutions"),
    )


def execution_settings(options: dict, always: bool = False):
    """The sandbox settings, or None when the command is not to execute."""
    from ..settings import ExecutionSettings

    if not (always or options.get("execute")):
        return None
    return ExecutionSettings(workers=options["workers"], timeout=options["exec_timeout"])


def is_store(path: Path) -> bool:
    """Whether a command-line input names a sample store (by suffix or SQLite header)."""
    if path.suffix in (".sqlite", ".db", ".sqlite3"):
        return True
    try:
        with path.open("rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def sample_source(options: dict):
    """A store given as input, or sample files to import into --store."""
    from ..settings import SampleSource

    inputs = list(options["inputs"])
    stores = [p for p in inputs if is_store(p)]
    files = [p for p in inputs if p not in stores]
    if len(stores) > 1 or (stores and files):
        raise GenerationError("give one store, or sample files (imported into --store)")
    path = stores[0] if stores else Path(options["store_path"])
    if stores and not path.exists():
        raise GenerationError(f"{path}: no such store; give an existing store or sample files")
    missing = [p for p in files if not p.is_file()]
    if missing:
        raise GenerationError(
            f"{missing[0]}: no such sample file; give human-eval JSONL or bigcode JSON files"
        )
    if not inputs and not path.exists():
        raise GenerationError(
            f"{path}: no such store; give a store or sample files, or run `cloneprobe audit`"
        )
    return SampleSource(
        store=path,
        files=tuple(files),
        model=options["model"],
        temperature=options["temperature"],
        prompt_set=options["prompt_set"],
        benchmark=options["benchmark_spec"],
        max_sample_bytes=options["max_sample_bytes"],
    )


# --- memorization signals --------------------------------------------------------------------

_reference_option = click.option(
    "--reference-model", metavar="SPEC",
    help="Report likelihood signals also relative to this model (hf:<path>, embedded, "
    "openai:<model>): the same texts scored by a model not suspected of memorizing them.",
)  # fmt: skip
audit_signal_options = apply([
    click.option("--signals", "signal_names", is_flag=False, flag_value="all", default=None,
                 metavar="[NAMES]",
                 help="Also compute memorization signals per task: bare for every signal "
                 "(perplexity, zlib, min_k, min_k_plus_plus, cdd, surface), or a comma list."),
    _reference_option,
])  # fmt: skip
"""--signals [NAMES] and --reference-model, for `audit`."""
signal_command_options = apply([
    click.option("--signals", "signal_names", default="all", show_default=True,
                 metavar="NAMES", help="Comma-separated signals, or all: perplexity, zlib, "
                 "min_k, min_k_plus_plus, cdd, surface."),
    _reference_option,
    click.option("--base-url", envvar="OPENAI_BASE_URL",
                 help="OpenAI-compatible server that scores openai:<model> samples."),
    click.option("--batch-size", "score_batch_size", type=click.IntRange(min=1), default=4,
                 show_default=True, help="Texts per forward pass when a local model scores."),
])  # fmt: skip
"""What `cloneprobe signals` computes, and where log-probs come from."""


def signal_settings(options: dict):
    """The signal settings, or None when no signal is asked for."""
    from ..settings import SignalSettings
    from ..signals.registry import parse_signal_names

    spec = options.get("signal_names")
    if spec is None:
        if options.get("reference_model"):
            raise GenerationError("--reference-model compares likelihood signals: add --signals")
        return None
    return SignalSettings(
        names=parse_signal_names(spec),
        reference_model=options.get("reference_model"),
        base_url=options.get("base_url"),
        batch_size=options.get("score_batch_size") or 4,
        timeout=options.get("timeout") or 120.0,
    )


as_written_option = click.option(
    "--as-written", is_flag=True,
    help="Score sample files exactly as given, as their own harness would (prompt + "
    "completion, or the whole program): no repair, no cutting. Kept apart in the store from "
    "the repaired import of the same file.")  # fmt: skip

"""Option groups shared by commands, config files, and turning options into typed settings.

Only click and the registries the choices come from are imported here: this module is loaded
for `cloneprobe --help`, which must start fast.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from ..benchmarks.registry import BENCHMARKS, DEFAULT_BENCHMARK, benchmark_choices
from ..clones.languages import LANGUAGES
from ..clones.profiles import PROFILES
from ..clones.types import CLONE_TYPES
from ..errors import UserError
from ..settings import ExecutionSettings, GenerationSettings, SampleSource, SignalSettings
from ..signals.registry import signals_help
from .checks import (
    EXEC_SECONDS,
    SECONDS,
    TEMPERATURE,
    THRESHOLD,
    TOP_P,
    CheckedPath,
    StorePath,
)

GENERATION = GenerationSettings()
SOURCE = SampleSource()
EXECUTION = ExecutionSettings()
SIGNALS = SignalSettings()
"""The settings' own defaults: the one place each default is written (help shows them)."""

VOCABULARY = {
    "--model": "The model, as the store names it",
    "--prompts": "Prompt set(s)",
    "--temperature": "Sampling temperature",
    "--store": "The SQLite sample store",
    "--benchmark": "The tasks",
    "--limit": "Only the first K tasks",
    "--tasks": "Only these tasks",
    "--seed": "Seed for sampling",
    "-n": "Samples per task",
    "--batch-size": "Texts per forward pass of a local model",
    "--mode": "completion: continue the prompt; chat: ask for the function",
    "--max-new-tokens": "Tokens per sample at most",
    "--as-written": "Exactly what the model wrote, as its own harness takes it: no repair",
    "--signals": "Memorization signals",
    "--json": "Print JSON on stdout",
    "--output": "Folder for the results",
    "--out": "The JSONL file to write",
    "--workers": "Processes at once",
    "--base-url": "OpenAI-compatible server",
    "--config": "A TOML file of this command's options",
}
"""What an option name means, in every command that has it: each command's help for the
option starts with this (tests/test_option_vocabulary.py walks every command to check)."""


def meaning(option: str, detail: str = "") -> str:
    """An option's help: its one meaning, then what it does in this command."""
    return VOCABULARY[option] + detail


def apply(options: list[Callable]) -> Callable:
    """One decorator applying `options` in the order listed (as they show in --help)."""

    def decorate(command):
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


class AliasedOption(click.Option):
    """An option with old spellings (`old=("--prompt-set",)`) kept for one release: they are
    accepted, hidden from --help, and using one prints a note naming the new spelling. A
    `show_default` text is shown as the default itself (a setting's default the value leaves
    unset, so the store records that none was given)."""

    def get_help_extra(self, ctx: click.Context):
        extra = super().get_help_extra(ctx)
        if isinstance(self.show_default, str) and "default" in extra:
            extra["default"] = self.show_default
        return extra

    def __init__(self, *args, old: tuple[str, ...] = (),
                 parse: Callable | None = None, **kwargs) -> None:  # fmt: skip
        super().__init__(*args, **kwargs)
        self.old = tuple(old)
        self.parse = parse
        """The command's own parser of the values (`--dose NAME=EPOCHS`), run on a config's
        values too, so that a wrong one is named by the file and the key."""

    @property
    def _old_dest(self) -> str:
        return f"{self.name}__old_spelling"

    def add_to_parser(self, parser, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        if self.old:
            action = "append" if self.multiple else "store"
            if self.is_flag:
                parser.add_option(obj=self, opts=self.old, dest=self._old_dest,
                                  action=f"{action}_const", const=self.flag_value)  # fmt: skip
            else:
                parser.add_option(obj=self, opts=self.old, dest=self._old_dest, action=action,
                                  nargs=self.nargs)  # fmt: skip

    def consume_value(self, ctx: click.Context, opts):
        if self.old and opts.get(self._old_dest) is not None:
            old = opts[self._old_dest]
            new = opts.get(self.name)
            if self.multiple:
                opts = {**opts, self.name: [*(new or []), *old]}
            elif new is None:
                opts = {**opts, self.name: old}
            click.echo(f"note: {'/'.join(self.old)} is the old spelling of {self.opts[0]}; it "
                       "goes in the next release, use the new one", err=True)  # fmt: skip
        return super().consume_value(ctx, opts)


def option(*decls, old: tuple[str, ...] = (), **kwargs) -> Callable:
    """click.option, with old spellings kept as hidden aliases (and `parse`, the command's
    parser of the values, see `AliasedOption.parse`)."""
    return click.option(*decls, cls=AliasedOption, old=old, **kwargs)


def _parse_families(values):
    from cloneprobe.evidence.panel.families import parse_family_options

    return parse_family_options(values)


# --- config files: click's default_map --------------------------------------------------------

def _config_names(command: click.Command, skip: str) -> dict[str, click.Parameter]:
    """Every key a config may use for the command's options: flag spellings and names."""
    names: dict[str, click.Parameter] = {}
    for param in command.params:
        if param.name == skip or not isinstance(param, click.Option):
            continue
        names[param.name] = param
        for flag in (*param.opts, *getattr(param, "old", ())):
            if flag.startswith("--"):
                names.setdefault(flag[2:].replace("-", "_"), param)
    return names


def _config_value(path: Path, key: str, value, param: click.Parameter) -> None:
    """A config value must be of the type the option takes (TOML `true` is no number, `2.5`
    no count), else a UserError naming the key."""
    kind = param.type
    if isinstance(param, click.Option) and param.is_flag:
        expected = "true or false"
    elif isinstance(kind, click.types.IntParamType):
        expected = "a whole number"
    elif isinstance(kind, click.types.FloatParamType) or kind.name == "float":
        expected = "a number"
    else:
        expected = "a string"
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not _is(item, expected):
            raise UserError(
                f"{path}: setting {key!r} is {item!r} ({type(item).__name__}); give {expected}, "
                f"as `--{key.replace('_', '-')}` takes"
            )


def _config_range(ctx: click.Context, path: Path, key: str, value, param: click.Parameter):
    """A config value the option itself would refuse (out of range, not finite, not a choice,
    an empty path or list) is refused naming the file and the key, not a flag never typed."""
    if isinstance(value, list) and not value:
        raise UserError(f"{path}: setting {key!r} is an empty list; give at least one value, "
                        f"or drop the key for the default")  # fmt: skip
    if isinstance(param, click.Option) and param.is_flag:
        return
    for item in value if isinstance(value, list) else [value]:
        try:
            param.type.convert(item, param, ctx)
        except click.BadParameter as error:
            reason = error.message.rstrip(".")
            raise UserError(f"{path}: setting {key!r} = {item!r}: {reason}; fix the value in "
                            "the file") from None  # fmt: skip


def _config_parsed(path: Path, key: str, value, param: click.Parameter) -> None:
    """Values a command parses itself (`--family MODEL=FAMILY`, `--dose NAME=EPOCHS`) are
    parsed here too, so that a wrong one names the file and the key, not a flag never typed."""
    values = tuple(value if isinstance(value, list) else [value])
    parse = getattr(param, "parse", None)
    if parse is None:
        return
    try:
        parse(values)
    except UserError as error:
        reason = str(error).split(": ", 1)[-1]
        raise UserError(f"{path}: setting {key!r} = {value!r}: {reason}") from None


def _is(value, expected: str) -> bool:
    if expected == "true or false":
        return isinstance(value, bool)
    if expected == "a whole number":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "a number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, str)


def _load_config(ctx: click.Context, param: click.Parameter, path: Path | None) -> Path | None:
    """Fill the command's defaults from a TOML file: the `[<command>]` table (e.g. `[audit]`),
    or the file's top-level keys (flags given on the command line still win; values are
    type-checked, then get the same conversions and range checks as the flags)."""
    if path is None:
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # a BOM (Notepad) is no key
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise UserError(
            f"{path}: cannot read the config ({error}); give a TOML file with an "
            f"[{ctx.info_name}] table"
        ) from error
    from .checks import note_input

    note_input(ctx, path)
    table = data.get(ctx.info_name, data)
    if not isinstance(table, dict):
        raise UserError(f"{path}: [{ctx.info_name}] is not a table; give `[{ctx.info_name}]` "
                        "followed by key = value lines")  # fmt: skip
    beside = [key for key, value in data.items() if table is not data
              and not isinstance(value, dict)]  # fmt: skip
    if beside:  # read as the command's table alone, they would be ignored in silence
        raise UserError(f"{path}: setting {beside[0]!r} is at the top, beside the "
                        f"[{ctx.info_name}] table, which alone is read; move it into "
                        f"[{ctx.info_name}]")  # fmt: skip
    names = _config_names(ctx.command, param.name)
    defaults = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        target = names.get(name)
        if target is None:
            raise UserError(
                f"{path}: unknown setting {key!r}; settings are the flags of "
                f"`cloneprobe {ctx.info_name} --help`"
            )
        if isinstance(value, dict):
            raise UserError(f"{path}: setting {key!r} is a table; give a value, as "
                            f"`--{key}` takes")  # fmt: skip
        _config_value(path, key, value, target)
        _config_range(ctx, path, key, value, target)
        _config_parsed(path, key, value, target)
        if getattr(target, "multiple", False) and not isinstance(value, list):
            value = [value]
        elif isinstance(value, list) and not getattr(target, "multiple", False):
            if target.name != "prompts_spec":
                raise UserError(f"{path}: setting {key!r} is a list; give one value, as "
                                f"`--{key}` takes")  # fmt: skip
            value = ",".join(value)
        defaults[target.name] = value
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    return path


config_option = click.option(
    "--config",
    "config_path",
    type=CheckedPath(path_type=Path, dir_okay=False),
    is_eager=True,
    expose_value=False,
    callback=_load_config,
    help=meaning("--config", " (keys at the top, or in a table named for the command, e.g. "
                 "[audit]); flags still win."),
)


benchmark_option = click.option(
    "--benchmark", "benchmark_spec", default=DEFAULT_BENCHMARK, show_default=True,
    metavar=benchmark_choices(),
    help=meaning("--benchmark", ": " + "; ".join(f"{e.name}: {e.description}"
                                                  for e in BENCHMARKS.values())
                 + "; or a JSONL with task_id, prompt, canonical_solution, entry_point."),
)  # fmt: skip
"""The one --benchmark every command shares: a built-in name or a benchmark JSONL."""


def store_option(detail: str = ".", dir_okay: bool = True) -> Callable:
    return click.option("--store", "store_path",
                        type=StorePath(path_type=Path, dir_okay=dir_okay),
                        default=GENERATION.store, show_default=True,
                        help=meaning("--store", detail))  # fmt: skip


def models_filter_option() -> Callable:
    return option("--model", "models", multiple=True,
                  help=meaning("--model", ": only its samples (repeat)."))  # fmt: skip


def prompts_filter_option() -> Callable:
    return option("--prompts", "prompt_sets", multiple=True, old=("--prompt-set",),
                  help=meaning("--prompts", ": only these (comma-separated, or repeat)."))


def split_names(values) -> list[str]:
    """Repeated and comma-separated names as one list."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


# --- option groups ---------------------------------------------------------------------------

MAX_N = 10_000
"""Samples per task at most: the study drew 20; 10**9 would plan forever."""

generation_options = apply([
    option("--model", "models", multiple=True, metavar="SPEC",
                 show_default=",".join(GENERATION.models),
                 help=meaning("--model", " and samples from: openai:<model>, hf:<path or "
                              "cached id>, or embedded. Repeat for several models.")),
    option("--temperature", "temperatures", multiple=True, type=TEMPERATURE,
                 show_default=",".join(map(str, GENERATION.temperatures)),
                 help=meaning("--temperature", "; repeat for a grid.")),
    option("-n", "n", type=click.IntRange(min=1, max=MAX_N), default=None,
                 show_default=str(GENERATION.n),
                 help=meaning("-n", ", prompt variant and temperature.")),
    option("--prompts", "prompts_spec", default=None, metavar="SETS",
                 show_default=GENERATION.prompts,
                 help=meaning("--prompts", " to sample, comma-separated: original, fixed, "
                              "disguised (renamed, decorated, examples recomputed: the "
                              "model's own convergence null), or paths of prompt folders or "
                              "JSONL.")),
    benchmark_option,
    click.option("--limit", type=click.IntRange(min=1), help=meaning("--limit", ".")),
    click.option("--tasks", metavar="IDS",
                 help=meaning("--tasks", ", e.g. 0,5,HumanEval/7.")),
    store_option("."),
    click.option("--mode", type=click.Choice(["completion", "chat"]),
                 help=meaning("--mode", " and take the fenced code (default: chat for a local "
                              "model whose tokenizer has a chat template, e.g. embedded; "
                              "completion otherwise).")),
    click.option("--top-p", type=TOP_P, default=GENERATION.top_p, show_default=True),
    click.option("--max-new-tokens", type=click.IntRange(min=1),
                 default=GENERATION.max_new_tokens, show_default=True,
                 help=meaning("--max-new-tokens", ".")),
    click.option("--stop", "stops", multiple=True,
                 help="Stop sequence (repeat); default HumanEval's \\ndef \\nclass \\nif "
                 "\\nprint \\n#, in completion mode."),
    click.option("--seed", type=click.IntRange(min=0, max=2**63 - 1),
                 help=meaning("--seed", ".")),
    click.option("--base-url", envvar="OPENAI_BASE_URL",
                 help=meaning("--base-url", ", e.g. http://localhost:8000/v1 (vLLM). "
                              "Credentials in it are used but never stored or printed.")),
    click.option("--api-key-file", type=CheckedPath(path_type=Path, dir_okay=False),
                 help="A file holding the API key (else OPENAI_API_KEY; never a flag)."),
    click.option("--concurrency", type=click.IntRange(min=1), default=GENERATION.concurrency,
                 show_default=True, help="API requests in flight."),
    click.option("--timeout", type=SECONDS, default=GENERATION.timeout, show_default=True,
                 help="Seconds per API request."),
    click.option("--batch-size", type=click.IntRange(min=1), default=GENERATION.batch_size,
                 show_default=True, help=meaning("--batch-size", ": sequences sampled.")),
    click.option("--dtype", type=click.Choice(["auto", "float32", "bfloat16"]),
                 default=GENERATION.dtype, show_default=True,
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
    click.option("--report", "report_dir", type=CheckedPath(path_type=Path, file_okay=False),
                 help="Write report.json, groups.csv, comparisons.csv, report.md, "
                 "table6.tex and report.html into this folder."),
    click.option("--json", "as_json", is_flag=True,
                 help=meaning("--json", ": the report, nothing else.")),
    click.option("--evidence", is_flag=True,
                 help="Print every clone pair's compared lines side by side."),
    click.option("--reference-solutions", type=CheckedPath(path_type=Path, dir_okay=False),
                 metavar="FILE.jsonl",
                 help="Independent solutions of the tasks (task_id with solution or "
                 "completion): a verdict they reach is not evidence of memorization."),
    click.option("--panel", "panel_files", multiple=True,
                 type=click.Path(path_type=Path, dir_okay=False, exists=True), metavar="FILE",
                 help="Sample files of other solvers (any format `import` reads; repeatable): "
                 "independent solutions for the convergence null, each model by its family."),
    option("--family", "families", multiple=True, metavar="MODEL=FAMILY", parse=_parse_families,
           help="Name a model's family (repeatable; default: from the model's name). "
           "Models of one family never vouch for each other."),
    click.option("--contamination", "contamination_dir",
                 type=CheckedPath(path_type=Path, file_okay=False),
                 help="A `cloneprobe scan` output folder: split pass@k and the clone evidence "
                 "into tasks found in that corpus and tasks not found, with a test of the "
                 "difference."),
])  # fmt: skip
"""How the audit's report is given."""

_execution_options = [
    click.option("--workers", type=click.IntRange(min=1), default=EXECUTION.workers,
                 show_default=True, help=meaning("--workers", ": sandboxed samples.")),
    click.option("--exec-timeout", type=EXEC_SECONDS, default=EXECUTION.timeout,
                 show_default=True, help="Wall-clock seconds per sample's tests."),
    click.option("--exec-cpu", type=click.IntRange(min=1), default=None, metavar="SECONDS",
                 help="CPU seconds of a whole sample, all its processes together (where a "
                 "control group counts them), and of each process [default: the timeout "
                 "rounded up, at least 10]."),
]  # fmt: skip
execution_options = apply([
    click.option("--execute", is_flag=True,
                 help="Also run each sample against its task's tests in the sandbox "
                 "and report pass@k beside the clone counts."),
    *_execution_options,
])  # fmt: skip
"""--execute, --workers, --exec-timeout, --exec-cpu."""
always_execution_options = apply(_execution_options)
"""--workers, --exec-timeout and --exec-cpu, for `execute` (which always executes)."""

max_sample_bytes_option = click.option(
    "--max-sample-bytes", type=click.IntRange(min=1), default=SOURCE.max_sample_bytes,
    show_default=True,
    help="Refuse a sample in a file larger than this, before parsing it.")

imported_sample_options = [
    click.option("--model", help=meaning("--model", ", of samples whose file does not say.")),
    click.option("--temperature", type=TEMPERATURE,
                 help=meaning("--temperature", " of samples whose file does not say.")),
    option("--prompts", "prompt_set", default=SOURCE.prompt_set, show_default=True,
           old=("--prompt-set",),
           help=meaning("--prompts", ": the one the samples answer, when a file does not say.")),
    benchmark_option,
    max_sample_bytes_option,
]  # fmt: skip
"""What a sample file does not say: `import`, and the commands that read sample files."""

sample_source_options = apply([
    click.argument("inputs", nargs=-1, type=CheckedPath(path_type=Path)),
    store_option(": the one to read, or to import sample files into."),
    *imported_sample_options,
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
    from .checks import check_store_path, read_api_key_file

    check_store_path(Path(options["store_path"]))
    check_generation_values(options)
    return GenerationSettings(
        models=tuple(options["models"]) or GENERATION.models,
        temperatures=tuple(options["temperatures"]) or GENERATION.temperatures,
        n=GENERATION.n if options["n"] is None else options["n"],
        prompts=options["prompts_spec"] or GENERATION.prompts,
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
        dtype=options.get("dtype") or GENERATION.dtype,
        recorded=recorded_options(options),
        api_key=read_api_key_file(options.get("api_key_file")),
    )


def check_generation_values(options: dict) -> None:
    """Values each option's type lets through but no run can mean: an empty --prompts or
    --stop, a --base-url that is not an http(s) URL or that no openai: model would use."""
    spec = options.get("prompts_spec")
    if spec is not None and not split_names([spec]):
        raise UserError(f"--prompts {spec!r} names no prompt set; give e.g. --prompts "
                        "original,fixed, or leave it out for the default")  # fmt: skip
    if any(stop == "" for stop in options.get("stops") or ()):
        raise UserError("--stop '': an empty stop sequence would end every sample at once; "
                        "give the text to stop at, e.g. --stop '\\ndef'")  # fmt: skip
    if not Path(options["store_path"]).exists():  # nothing stored: every model must load
        check_local_models(options.get("models") or GENERATION.models)
    url = options.get("base_url")
    if url:
        from urllib.parse import urlsplit

        from ..generation.secrets import redact_url

        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
            raise UserError(f"--base-url {redact_url(url)!r}: not an http(s) URL; give the "
                            "server's address, e.g. http://localhost:8000/v1")  # fmt: skip
        models = options.get("models") or GENERATION.models
        ctx = click.get_current_context(silent=True)
        source = ctx.get_parameter_source("base_url") if ctx else None
        typed = source == click.core.ParameterSource.COMMANDLINE
        if typed and not any(m.startswith("openai:") for m in models):
            raise UserError(f"--base-url is given but no --model is openai:<model> (models: "
                            f"{', '.join(models)}), so no request would go there; give "
                            "--model openai:<name>, or drop --base-url")  # fmt: skip


def check_local_models(models) -> None:
    """A local model (`hf:`, `embedded`) that no file can load is refused before the store or
    anything else is made (nothing is downloaded, so a missing folder or uncached id never
    loads). Only for a new store: a store may hold every sample planned, and then the model
    is never loaded (a re-run must not need its weights)."""
    from ..generation.errors import GenerationError
    from ..generation.specs import parse_model_spec
    from ..signals.scoring import local_model_problem

    for model in models:
        try:
            spec = parse_model_spec(model)
        except GenerationError:
            continue  # refused with its own message where the spec is used
        problem = local_model_problem(spec) if spec.kind in ("hf", "embedded") else None
        if problem:
            raise UserError(f"--model {model!r}: {problem}")


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
    from cloneprobe.evidence.panel.families import parse_family_options

    return DetectionSettings(
        detector_config(options),
        cross_task=options["cross_task"],
        reference_solutions=options.get("reference_solutions"),
        panel_files=tuple(options.get("panel_files") or ()),
        families=tuple(parse_family_options(options.get("families") or ()).items()),
    )


def execution_settings(options: dict, always: bool = False):
    """The sandbox settings, or None when the command is not to execute."""
    from ..settings import ExecutionSettings

    if not (always or options.get("execute")):
        return None
    return ExecutionSettings(workers=options["workers"], timeout=options["exec_timeout"],
                             cpu_seconds=options.get("exec_cpu"))  # fmt: skip


def is_store(path: Path) -> bool:
    """Whether a command-line input names a sample store (by suffix or SQLite header)."""
    from ..generation.storefile import is_sqlite_file

    return path.suffix in (".sqlite", ".db", ".sqlite3") or is_sqlite_file(path)


def sample_source(options: dict):
    """A store given as input, or sample files to import into --store."""
    from ..generation.samplefiles import check_sample_files
    from ..settings import SampleSource
    from .checks import check_store_path

    inputs = list(options["inputs"])
    stores = [p for p in inputs if is_store(p)]
    files = [p for p in inputs if p not in stores]
    if len(stores) > 1 or (stores and files):
        raise UserError("give one store, or sample files (imported into --store)")
    path = stores[0] if stores else Path(options["store_path"])
    if stores and not path.exists():
        raise UserError(f"{path}: no such store; give an existing store or sample files")
    check_sample_files(files)
    check_store_path(path, "--store", inputs=files)
    if not inputs and not path.exists():
        raise UserError(
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
                 help=meaning("--signals", " to compute per task as well: bare for every "
                              f"signal ({signals_help()}), or a comma list.")),
    _reference_option,
])  # fmt: skip
"""--signals [NAMES] and --reference-model, for `audit`."""
signal_command_options = apply([
    click.option("--signals", "signal_names", default="all", show_default=True,
                 metavar="NAMES", help=meaning("--signals", " to compute, comma-separated, or "
                                               f"all: {signals_help()}.")),
    _reference_option,
    click.option("--base-url", envvar="OPENAI_BASE_URL",
                 help=meaning("--base-url", " that scores openai:<model> samples.")),
    click.option("--batch-size", "score_batch_size", type=click.IntRange(min=1),
                 default=SIGNALS.batch_size, show_default=True,
                 help=meaning("--batch-size", ": texts scored.")),
])  # fmt: skip
"""What `cloneprobe signals` computes, and where log-probs come from."""


def signal_settings(options: dict):
    """The signal settings, or None when no signal is asked for."""
    from ..settings import SignalSettings
    from ..signals.registry import parse_signal_names

    spec = options.get("signal_names")
    if spec is None:
        if options.get("reference_model"):
            raise UserError("--reference-model compares likelihood signals: add --signals")
        return None
    settings = SignalSettings(
        names=parse_signal_names(spec),
        reference_model=options.get("reference_model"),
        base_url=options.get("base_url"),
        batch_size=options.get("score_batch_size") or SIGNALS.batch_size,
        timeout=options.get("timeout") or SIGNALS.timeout,
    )
    if settings.reference_model is not None:  # refused now, not after the long work
        import os

        from ..signals.scoring import ScorerOptions, check_scorer_model

        check_scorer_model("--reference-model", settings.reference_model, ScorerOptions(
            base_url=settings.base_url, api_key=os.environ.get("OPENAI_API_KEY"),
            timeout=settings.timeout))  # fmt: skip
    return settings


def check_servers_score(settings, models: list[str]) -> None:
    """Signals that all need log-probs, asked of a model a server is to generate with: the
    server is asked for prompt log-probs before it generates (a server without them would
    leave every signal asked n/a, found only after the generation)."""
    import os

    from ..signals.registry import get_signal
    from ..signals.scoring import ScorerOptions, check_scorer_model

    if settings is None or not all(get_signal(name).needs_scorer for name in settings.names):
        return
    options = ScorerOptions(base_url=settings.base_url, api_key=os.environ.get("OPENAI_API_KEY"),
                            timeout=settings.timeout)  # fmt: skip
    for model in models:
        if model.strip().startswith("openai:"):
            check_scorer_model(f"--signals {','.join(settings.names)} with --model", model,
                               options)  # fmt: skip


as_written_option = click.option(
    "--as-written", is_flag=True,
    help=meaning("--as-written", ": sample files scored exactly as given (prompt + completion, "
                 "or the whole program), no cutting; kept apart in the store from the repaired "
                 "import of the same file."))  # fmt: skip

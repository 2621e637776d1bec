"""Names of the package, loaded on first use (lazy_loader reads this stub at run time;
type checkers read it as the package's interface)."""

from .backends import (
    Backend as Backend,
)
from .backends import (
    BackendOptions as BackendOptions,
)
from .backends import (
    make_backend as make_backend,
)
from .errors import GenerationError as GenerationError
from .postprocess import understand as understand
from .runner import Plan as Plan
from .runner import RunSummary as RunSummary
from .runner import run_plan as run_plan
from .samplefiles import (
    IMPORTED as IMPORTED,
)
from .samplefiles import (
    ImportDefaults as ImportDefaults,
)
from .samplefiles import (
    import_sample_files as import_sample_files,
)
from .samplefiles import (
    read_sample_file as read_sample_file,
)
from .samplefiles import (
    write_humaneval_jsonl as write_humaneval_jsonl,
)
from .sampling import (
    HUMANEVAL_STOPS as HUMANEVAL_STOPS,
)
from .sampling import (
    SamplingSettings as SamplingSettings,
)
from .sampling import (
    check_temperatures as check_temperatures,
)
from .specs import ModelSpec as ModelSpec
from .specs import parse_model_spec as parse_model_spec
from .store import (
    DEFAULT_STORE as DEFAULT_STORE,
)
from .store import (
    SampleStore as SampleStore,
)
from .store import (
    StoredSample as StoredSample,
)
from .versions import library_versions as library_versions

__all__ = [
    "DEFAULT_STORE",
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

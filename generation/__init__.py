"""cloneprobe.generation: model backends, sampling plans and the resumable sample store.

Knows benchmarks (the prompts it samples); knows nothing of clone detection.

Names are imported on first use (lazy_loader), so importing the package for one name
does not import all of it.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "backends": ["Backend", "BackendOptions", "make_backend"],
        "errors": ["GenerationError"],
        "postprocess": ["understand"],
        "runner": ["Plan", "RunSummary", "run_plan"],
        "samplefiles": [
            "IMPORTED",
            "ImportDefaults",
            "import_sample_files",
            "read_sample_file",
            "write_humaneval_jsonl",
        ],
        "sampling": ["HUMANEVAL_STOPS", "SamplingSettings", "check_temperatures"],
        "specs": ["ModelSpec", "parse_model_spec"],
        "store": ["DEFAULT_STORE", "SampleStore", "StoredSample"],
        "versions": ["library_versions"],
    },
)

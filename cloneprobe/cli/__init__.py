"""The command line: `main` is the `cloneprobe` group; one module per command."""

from .main import main

__all__ = ["main"]

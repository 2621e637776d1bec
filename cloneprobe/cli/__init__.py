"""The command line: `main` is the `cloneprobe` group; one module per command."""

try:
    from .main import main
except KeyboardInterrupt:  # Ctrl-C while the commands load: nothing was done yet, no traceback
    import sys

    sys.stderr.write("interrupted: while starting, before any work; nothing was written\n")
    raise SystemExit(130) from None

__all__ = ["main"]

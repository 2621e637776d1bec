"""cloneprobe.benchmarks: tasks, prompt sets and the canonical fragments samples are compared with.

Knows nothing of models or clone detection.

Names are imported on first use (lazy_loader), so importing the package for one name
does not import all of it. The names are declared in `__init__.pyi`, which lazy_loader reads at
run time and type checkers read as the package's interface.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)

"""cloneprobe.clones: a Type-1/2/3 clone detector in the manner of NiCad.

Stages: extract fragments (`extract`), pretty-print one statement per line (`pretty`),
rename (`normalize`), compare exactly or by LCS within a size window (`compare`), cross-clone
pairs between two systems (`detect`), clone classes as connected components (`classes`).
Two layouts: `statements` (default profile) and `source` (nicad: NiCad's grammar,
`source_layout`). Judging the answer, not the context: a program's answer (`answer`:
entry point, nested functions, helpers it uses), canonical items the prompt already shows
(`prompt_overlap`), docstrings blanked as the study prepared its inputs (`docstrings`).
Knows nothing of models or benchmarks.

Names are imported on first use (lazy_loader), so importing the package for one name
does not import all of it. The names are declared in `__init__.pyi`, which lazy_loader reads at
run time and type checkers read as the package's interface.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)

"""cloneprobe.clones: a Type-1/2/3 clone detector in the manner of NiCad.

Stages: extract fragments (`extract`), pretty-print one statement per line (`pretty`),
rename (`normalize`), compare exactly or by LCS within a size window (`compare`), cross-clone
pairs between two systems (`detect`), clone classes as connected components (`classes`).
Two layouts: `statements` (default profile) and `source` (nicad: NiCad's grammar,
`source_layout`). Judging the answer, not the context: a program's answer (`answer`:
entry point, nested functions, helpers it uses), canonical items the prompt already shows
(`prompt_overlap`), docstrings blanked as the study prepared its inputs (`docstrings`).
Knows nothing of models or benchmarks.
"""

from .answer import AnswerScope, FunctionSpan
from .detect import DetectorConfig, compare_systems, find_clones
from .docstrings import blank_docstrings
from .errors import CloneDetectorError, ConfigError, InputPathError, UnknownLanguageError
from .extract import FragmentExtractor
from .fragment import LAYOUTS, Fragment, Layout
from .languages import LANGUAGES, get_language
from .profiles import (
    CLONE_TYPES,
    DEFAULT,
    LADDER,
    NICAD,
    PROFILES,
    CloneType,
    Profile,
    clone_type,
    get_clone_type,
    get_profile,
)
from .prompt_overlap import PromptOverlap, prompt_overlap, unshown_similarity
from .report import ClonePair, CloneReport
from .source import SourceFile

__all__ = [
    "CLONE_TYPES",
    "DEFAULT",
    "LADDER",
    "LANGUAGES",
    "LAYOUTS",
    "NICAD",
    "PROFILES",
    "AnswerScope",
    "CloneDetectorError",
    "ClonePair",
    "CloneReport",
    "CloneType",
    "ConfigError",
    "DetectorConfig",
    "Fragment",
    "FragmentExtractor",
    "FunctionSpan",
    "InputPathError",
    "Layout",
    "Profile",
    "PromptOverlap",
    "SourceFile",
    "UnknownLanguageError",
    "blank_docstrings",
    "clone_type",
    "compare_systems",
    "find_clones",
    "get_clone_type",
    "get_language",
    "get_profile",
    "prompt_overlap",
    "unshown_similarity",
]

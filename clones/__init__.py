"""cloneprobe.clones: a Type-1/2/3 clone detector in the manner of NiCad.

Stages: extract fragments (`extract`), pretty-print one statement per line (`pretty`),
rename (`normalize`), compare exactly or by LCS within a size window (`compare`), cross-clone
pairs between two systems (`detect`), clone classes as connected components (`classes`).
Knows nothing of models or benchmarks.
"""

from .detect import DetectorConfig, compare_systems, find_clones
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
    "CloneDetectorError",
    "ClonePair",
    "CloneReport",
    "CloneType",
    "ConfigError",
    "DetectorConfig",
    "Fragment",
    "FragmentExtractor",
    "InputPathError",
    "Layout",
    "Profile",
    "SourceFile",
    "UnknownLanguageError",
    "clone_type",
    "compare_systems",
    "find_clones",
    "get_clone_type",
    "get_language",
    "get_profile",
]

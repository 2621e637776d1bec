"""Names of the package, loaded on first use (lazy_loader reads this stub at run time;
type checkers read it as the package's interface)."""

from .answer import AnswerScope as AnswerScope
from .answer import FunctionSpan as FunctionSpan
from .detect import (
    DetectorConfig as DetectorConfig,
)
from .detect import (
    compare_systems as compare_systems,
)
from .detect import (
    find_clones as find_clones,
)
from .docstrings import blank_docstrings as blank_docstrings
from .errors import (
    CloneDetectorError as CloneDetectorError,
)
from .errors import (
    ConfigError as ConfigError,
)
from .errors import (
    InputPathError as InputPathError,
)
from .errors import (
    UnknownLanguageError as UnknownLanguageError,
)
from .extract import FragmentExtractor as FragmentExtractor
from .fragment import LAYOUTS as LAYOUTS
from .fragment import Fragment as Fragment
from .fragment import Layout as Layout
from .languages import LANGUAGES as LANGUAGES
from .languages import get_language as get_language
from .profiles import (
    DEFAULT as DEFAULT,
)
from .profiles import (
    NICAD as NICAD,
)
from .profiles import (
    PROFILES as PROFILES,
)
from .profiles import (
    Profile as Profile,
)
from .profiles import (
    get_profile as get_profile,
)
from .prompt_overlap import (
    PromptOverlap as PromptOverlap,
)
from .prompt_overlap import (
    prompt_overlap as prompt_overlap,
)
from .prompt_overlap import (
    shown_lines as shown_lines,
)
from .prompt_overlap import (
    unshown_similarity as unshown_similarity,
)
from .report import ClonePair as ClonePair
from .report import CloneReport as CloneReport
from .source import SourceFile as SourceFile
from .types import (
    CLONE_TYPES as CLONE_TYPES,
)
from .types import (
    LADDER as LADDER,
)
from .types import (
    RANKS as RANKS,
)
from .types import (
    CloneType as CloneType,
)
from .types import (
    choose_types as choose_types,
)
from .types import (
    clone_type as clone_type,
)
from .types import (
    get_clone_type as get_clone_type,
)
from .types import (
    rank_of as rank_of,
)
from .types import (
    type_named as type_named,
)

__all__ = [
    "CLONE_TYPES",
    "DEFAULT",
    "LADDER",
    "LANGUAGES",
    "LAYOUTS",
    "NICAD",
    "PROFILES",
    "RANKS",
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
    "choose_types",
    "clone_type",
    "compare_systems",
    "find_clones",
    "get_clone_type",
    "get_language",
    "get_profile",
    "prompt_overlap",
    "rank_of",
    "shown_lines",
    "type_named",
    "unshown_similarity",
]

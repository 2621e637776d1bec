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
does not import all of it.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "answer": ["AnswerScope", "FunctionSpan"],
        "detect": ["DetectorConfig", "compare_systems", "find_clones"],
        "docstrings": ["blank_docstrings"],
        "errors": ["CloneDetectorError", "ConfigError", "InputPathError", "UnknownLanguageError"],
        "extract": ["FragmentExtractor"],
        "fragment": ["LAYOUTS", "Fragment", "Layout"],
        "languages": ["LANGUAGES", "get_language"],
        "profiles": ["DEFAULT", "NICAD", "PROFILES", "Profile", "get_profile"],
        "prompt_overlap": ["PromptOverlap", "prompt_overlap", "shown_lines", "unshown_similarity"],
        "report": ["ClonePair", "CloneReport"],
        "source": ["SourceFile"],
        "types": [
            "CLONE_TYPES",
            "LADDER",
            "RANKS",
            "CloneType",
            "choose_types",
            "clone_type",
            "get_clone_type",
            "rank_of",
            "type_named",
        ],
    },
)

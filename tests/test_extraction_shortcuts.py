"""The extractor's and encoder's shortcuts give what the plain ways give (issue 24, item 1).

These shortcuts make detection faster and must never change a verdict: functions are found
by a walk through the node types that can hold one (instead of a query over every node) in a
tree without syntax errors; the source-layout printer slices token texts from the text when
it is ASCII (instead of decoding bytes); the encoder numbers each distinct line once and
builds every fragment's sequence from those numbers (instead of renaming each fragment); and
near-miss matching scores a large window in cdist blocks (instead of one query at a time).
Each is checked here against the plain way on real programs: the repository's own Python
files, HumanEval's prompts and canonical solutions, and the published sample files of
tests/data. perf/detect_speed.py checks whole runs against a baseline tree.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

import cloneprobe.clones.compare as compare
from cloneprobe.benchmarks import load_humaneval
from cloneprobe.clones import (
    DEFAULT,
    LADDER,
    NICAD,
    ConfigError,
    DetectorConfig,
    FragmentExtractor,
    SourceFile,
    compare_systems,
    get_language,
)
from cloneprobe.clones.detect import _Encoder
from cloneprobe.clones.normalize import compared_items
from cloneprobe.clones.source import normalize_newlines
from cloneprobe.clones.source_layout import print_source_lines

PYTHON = get_language("python")
ROOT = Path(__file__).resolve().parent.parent

# A function in every kind of node that can hold one, without a syntax error.
EVERY_HOLDER = """
import functools

def top(a):
    def nested(b):
        return b
    return nested(a)

@functools.cache
def decorated(x):
    return x

class Box:
    def method(self):
        return 1

    class Inner:
        def deep(self):
            return 2

if True:
    def in_if():
        return 1
elif False:
    def in_elif():
        return 2
else:
    def in_else():
        return 3

for i in range(2):
    def in_for():
        return i
else:
    def in_for_else():
        return 0

while False:
    def in_while():
        return 0

try:
    def in_try():
        return 0
except ValueError:
    def in_except():
        return 1
finally:
    def in_finally():
        return 2

with open("f") as handle:
    def in_with():
        return handle

match top:
    case 1:
        def in_case():
            return 1
"""


# Where a line break is found from the bytes: strings spanning rows with tokens after them on
# their last row (in and out of brackets), a continuation, comments between tokens, statements
# after `;`, a string ending the function, and a syntax error (MISSING nodes have no text).
ROW_EDGES = '''
def after_strings(a, b):
    x = """first
    second""" + a; y = b
    z = f(\'\'\'one
two\'\'\', a,  # comment
          b) if a else """x
""".strip()
    w = a + \\
        b
    return ("""p
    q""", x, y, z, w)


def string_last(a):
    if a:
        return 1
    return """a
    b"""


def broken(a):
    x = (a + 1
    return x
'''


def programs() -> list[str]:
    """Some of the repository's Python files, HumanEval's programs and the published
    samples."""
    texts = [EVERY_HOLDER, ROW_EDGES]
    for folder in ("clones", "perf", "benchmarks"):
        texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / folder).rglob("*.py"))]
    for task in load_humaneval():
        texts.append(task.prompt + task.canonical_solution)
        texts.append(task.prompt)
    prompts = {t.task_id: t.prompt for t in load_humaneval()}
    for name in ("humaneval_results.jsonl", "import_samples.jsonl"):
        for row in map(json.loads, (ROOT / "tests" / "data" / name).read_text().splitlines()):
            text = row.get("completion") or row["solution"]
            texts += [text, prompts[row["task_id"]] + text]
    return texts


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return programs()


def test_the_every_holder_program_has_no_syntax_error_and_a_function_in_each_holder():
    extractor = FragmentExtractor(PYTHON, "source")
    tree = extractor.parser.parse(EVERY_HOLDER.encode())
    assert not tree.root_node.has_error
    names = [f.name for f in extractor.extract(SourceFile("t.py", EVERY_HOLDER))]
    assert names == ["top", "nested", "decorated", "method", "deep", "in_if", "in_elif",
                     "in_else", "in_for", "in_for_else", "in_while", "in_try", "in_except",
                     "in_finally", "in_with", "in_case"]  # fmt: skip


def test_the_function_walk_finds_exactly_the_functions_the_query_finds(corpus):
    extractor = FragmentExtractor(PYTHON, "source")
    walked = queried = 0
    for text in corpus:
        root = extractor.parser.parse(normalize_newlines(text).encode()).root_node
        by_query = extractor.query_cursor.captures(root).get("fragment", [])
        expected = sorted((n.start_byte, n.end_byte) for n in by_query)
        found = [(n.start_byte, n.end_byte) for n in extractor.function_nodes(root)]
        assert found == expected, text[:200]
        walked += not root.has_error
        queried += root.has_error
    assert walked > 1000 and queried > 0  # both ways were exercised


def test_fragments_are_the_same_with_and_without_the_shortcuts(corpus):
    """The extractor's fragments (functions walked to, token texts sliced from ASCII text)
    equal those of the functions the query finds printed from bytes and from rows; the
    non-ASCII programs take the bytes path on both sides."""
    extractor = FragmentExtractor(PYTHON, "source", memo=False)
    rules = PYTHON.source_lines
    ascii_seen = 0
    for text in corpus:
        fragments = extractor.extract(SourceFile("t.py", text))
        text = normalize_newlines(text)
        data = text.encode()
        ascii_seen += len(data) == len(text)
        root = extractor.parser.parse(data).root_node
        nodes = extractor.query_cursor.captures(root).get("fragment", [])
        nodes.sort(key=lambda node: node.start_byte)
        plain = [extractor.function_fragment(SourceFile("t.py", text), n, data) for n in nodes]
        plain = [f for f in plain if f is not None]
        assert [(f.lines, f.body_start, f.start_line, f.end_line, f.name) for f in fragments] == [
            (f.lines, f.body_start, f.start_line, f.end_line, f.name) for f in plain
        ], text[:200]
        for node in nodes:
            from_bytes = print_source_lines(PYTHON, rules, node, source=data)
            assert print_source_lines(PYTHON, rules, node) == from_bytes, text[:200]
    assert ascii_seen > 1000


@pytest.mark.parametrize("profile_layout", ["source", "statements"])
def test_encoder_sequences_are_the_compared_items_numbered(corpus, profile_layout):
    """Every fragment's sequence, in the modes that take the shortcut, spells its compared
    items (consistent renaming takes the plain way)."""
    profile = NICAD if profile_layout == "source" else DEFAULT
    extractor = FragmentExtractor(PYTHON, profile.layout)
    fragments = [f for text in corpus[-2000:] for f in extractor.extract(SourceFile("t.py", text))]
    encoder = _Encoder(profile)
    for mode in ("none", "blind"):
        for fragment in fragments:
            encoder.sequence(fragment, mode)  # fill the caches before reading them back
    folded = [f for f in fragments if any(line[0][0] == "str_row" for line in f.lines)]
    # the source layout prints a multi-row string as rows, which renaming folds
    assert len(folded) > 10 if profile_layout == "source" else not folded
    words = {number: item for item, number in encoder.vocabulary.items()}
    for mode in ("none", "blind"):
        for fragment in fragments:
            expected = compared_items(fragment, mode, profile.grain, profile.compare_header)
            assert [words[n] for n in encoder.sequence(fragment, mode)] == expected


def test_detection_leaves_the_garbage_collector_as_it_found_it():
    """Extraction and comparison pause the cyclic collector while they run (clones/collector):
    it runs again after them, also after an error, and stays off when the caller turned it
    off."""
    import gc

    extractor = FragmentExtractor(PYTHON, "source")
    source = SourceFile("t.py", "def f(x):\n    y = x + 1\n    return y\n")
    config = DetectorConfig(profile=NICAD, min_lines=1)
    was = gc.isenabled()
    try:
        gc.enable()
        fragments = extractor.extract(source)
        compare_systems(fragments, fragments, config)
        assert gc.isenabled()
        with pytest.raises(ConfigError):
            compare_systems(fragments, fragments, DetectorConfig(profile=DEFAULT))
        assert gc.isenabled()
        gc.disable()
        extractor.extract(source)
        compare_systems(fragments, fragments, config)
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_types_of_the_ladder_are_the_ones_these_checks_cover():
    assert {t.rename for t in DetectorConfig(types=LADDER).types} <= {"none", "blind"}


@pytest.mark.parametrize("threshold", [Fraction(1, 10), Fraction(3, 10), Fraction(1, 2)])
def test_near_miss_matching_in_blocks_finds_what_one_query_at_a_time_finds(
    corpus, threshold, monkeypatch
):
    """Scoring a window's sequences in cdist blocks gives the pairs, LCS values and order of
    one process.extract call per query (blocks smaller than a window, too)."""
    extractor = FragmentExtractor(PYTHON, "source")
    fragments = [f for text in corpus for f in extractor.extract(SourceFile("t.py", text))]
    unique, _ = _Encoder(NICAD).unique(fragments, "blind")
    queries = unique[::5]
    monkeypatch.setattr(compare, "BATCH_PAIRS", 10**12)
    one_by_one = compare.near_miss_matches(queries, unique, threshold)
    monkeypatch.setattr(compare, "BATCH_PAIRS", 0)
    monkeypatch.setattr(compare, "BATCH_CELLS", 5_000)
    assert compare.near_miss_matches(queries, unique, threshold) == one_by_one
    assert len(one_by_one) > 200
    assert len({lcs for _, _, lcs in one_by_one}) > 5

"""Planted recall on a small corpus of real files, and what the verifier says of each kind."""

from __future__ import annotations

import pytest
from scan_corpora import STDLIB, planted_corpus_with_code

from cloneprobe.benchmarks import canonical_source, load_humaneval
from cloneprobe.scan.idioms import RankCollector, judge
from cloneprobe.scan.index import build_index
from cloneprobe.scan.planting import every_line_added, plant_into, renamed
from cloneprobe.scan.scanner import Document, DocumentScanner

EXPECTED_TYPE = {"verbatim": "1", "renamed": "2", "line-added": "3"}


@pytest.fixture(scope="module")
def index():
    return build_index(load_humaneval())


@pytest.fixture(scope="module")
def scanned(index):
    docs, codes = planted_corpus_with_code()
    scanner = DocumentScanner(index)
    matches = scanner.scan([Document(d.id, d.text, d.repo) for d in docs])
    return docs, codes, matches


def test_every_planted_kind_is_found_with_its_clone_type(scanned):
    _, codes, matches = scanned
    plants = set(codes)
    by_key = {(m.document, m.task_id): m for m in matches}
    for document, task_id, kind in plants:
        match = by_key.get((document, task_id))
        assert match is not None, f"{kind} {task_id} not found in {document}"
        if kind == "line-added" and not match.signature:
            # the line went in before the body's first statement: the body is intact
            assert match.clone_type == "1", match
        else:
            assert match.clone_type == EXPECTED_TYPE[kind] and match.signature, (kind, match)
        assert match.matched == "solution"


@pytest.mark.slow(
    reason="about 4 s of CPU (11 s wall on a busy 2-core machine): 952 copies of a "
    "real file scanned; the fast suite finds every planted kind, a line added too "
    "(test_every_planted_kind_is_found_with_its_clone_type)"
)
def test_a_line_added_anywhere_in_any_canonical_is_found(index):
    """Every canonical, short ones too (`return x + y`: a line added between signature and
    body leaves no token 10-gram whole), with a statement added before any of its
    statements, planted in a real file, is found as a clone of its task."""
    host = (STDLIB / "json" / "scanner.py").read_text(encoding="utf-8")
    docs, expected = [], {}
    for task in load_humaneval():
        for k, code in enumerate(every_line_added(canonical_source(task))):
            docs.append(Document(f"{task.task_id}+{k}", plant_into(host, code, k)))
            expected[docs[-1].id] = task.task_id
    found = {(m.document, m.task_id) for m in DocumentScanner(index).scan(docs) if m.clone_type}
    missed = sorted(doc for doc, task_id in expected.items() if (doc, task_id) not in found)
    assert len(docs) > 900 and not missed, missed


def test_a_short_canonicals_shape_is_no_match_through_the_short_ngrams(index):
    """Only a copy with lines added, not any code of the shape, is found through the short
    n-grams alone: two typed one-line functions hold enough of HumanEval/27's 5-grams (its
    signature's, `-> str: return`), and `return s.encode("ascii")` is a Type-3 of `return
    string.swapcase()` after blind renaming, but not a copy of it."""
    copy = "def flip(text: str) -> str:\n    checked_count = 0\n    return text.swapcase()\n"
    shape = ('def encoded(s: str) -> bytes:\n    return s.encode("ascii")\n\n\n'
             'def label(n: int) -> str:\n    return f"#{n}"\n')  # fmt: skip
    matches = DocumentScanner(index).scan([Document("copy", copy), Document("shape", shape)])
    found = {(m.document, m.clone_type) for m in matches if m.task_id == "HumanEval/27"}
    assert found == {("copy", "3")}


def test_a_copy_with_a_line_added_is_spanned_to_its_own_last_token(index):
    """HumanEval/137 ends in a name (`... else b`), which the host's later code has plenty
    of: an LCS traceback matched it there and the span ran 127 tokens for the copy's 81."""
    host = (STDLIB / "json" / "scanner.py").read_text(encoding="utf-8")
    code = every_line_added(canonical_source(load_humaneval().get("HumanEval/137")))[1]
    text = plant_into(host, code, 1)
    [match] = [m for m in DocumentScanner(index).scan([Document("doc", text)])
               if m.task_id == "HumanEval/137"]  # fmt: skip
    start = text.index(code)
    assert match.span == (start, start + len(code.rstrip())) and match.clone_type == "3"


def test_span_is_the_planted_function_to_its_last_character(scanned):
    docs, codes, matches = scanned
    texts = {d.id: d.text for d in docs}
    by_key = {(m.document, m.task_id): m for m in matches}
    for (document, task_id, kind), code in codes.items():
        match = by_key[(document, task_id)]
        start = texts[document].index(code)
        stop = start + len(code.rstrip())
        text = texts[document][match.span[0] : match.span[1]]
        if match.signature:  # from `def` to the body's last token
            assert match.span == (start, stop) and text.startswith("def "), (kind, match)
        else:  # the body alone (a line went in before it): its first line to the end
            source = canonical_source(load_humaneval().get(task_id))
            first_line = source[source.index(":\n") + 2 :].lstrip().splitlines()[0]
            body_start = texts[document].index(first_line, start)
            assert match.span == (body_start, stop) and body_start > start, (kind, match)


def test_unplanted_real_files_give_no_copy(scanned, index):
    _, codes, matches = scanned
    planted = {p[0] for p in codes}  # HumanEval/59's canonical holds HumanEval/31's
    collector = RankCollector()
    for match in matches:
        collector.add(match)
    sizes = {t.task_id: len(t.body) for t in index.tasks}
    judged = judge(collector.matches, collector.tallies, sizes)
    outside = [m for m in judged if m.document not in planted]
    assert all(m.evidence != "copy" for m in outside), outside


def test_docstring_and_test_code_beside_a_copy_make_it_strong(index):
    task = load_humaneval().get("HumanEval/31")
    text = "import os\n\n" + task.prompt + task.canonical_solution + "\n\n" + task.test
    match = DocumentScanner(index).scan([Document("doc", text)])[0]
    assert match.task_id == "HumanEval/31" and match.matched == "both"
    assert match.docstring == 1.0 and match.test == 1.0
    assert judge([match], {}, {"HumanEval/31": 30})[0].evidence == "strong"


def test_prompt_alone_is_a_prompt_match(index):
    task = load_humaneval().get("HumanEval/31")
    match = DocumentScanner(index).scan([Document("doc", task.prompt + "    pass\n")])
    found = [(m.task_id, m.matched, m.clone_type) for m in match]
    assert found == [("HumanEval/31", "prompt", None)]


def test_a_short_canonical_is_labelled_short(index):
    task = load_humaneval().get("HumanEval/23")  # return len(string)
    code = renamed("def strlen(string: str) -> int:\n    return len(string)\n", 1)
    [match] = DocumentScanner(index).scan([Document("doc", code)])
    sizes = {t.task_id: len(t.body) for t in index.tasks}
    assert match.task_id == task.task_id and judge([match], {}, sizes)[0].evidence == "short"


def test_a_short_canonicals_shape_with_other_builtins_is_counted_not_listed(index):
    copy = renamed("def strlen(string: str) -> int:\n    return len(string)\n", 1)
    shape = "def absolute(q: str) -> int:\n    return abs(q)\n"
    matches = DocumentScanner(index).scan([Document("copy", copy), Document("shape", shape)])
    assert {m.document for m in matches if m.task_id == "HumanEval/23"} == {"copy", "shape"}
    collector = RankCollector(frozenset({"HumanEval/23"}))
    for match in matches:
        collector.add(match)
    assert [m.document for m in collector.matches if m.task_id == "HumanEval/23"] == ["copy"]
    tally = collector.tallies["HumanEval/23"]
    assert (tally.documents, tally.unlisted) == (2, 1)

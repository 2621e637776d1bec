"""Normalization for the scan: what survives renaming and layout, what is never code, and
odd input (Python 2, binary, minified) that must tokenize without error."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cloneprobe.scan.hashing import (
    constant_hash,
    ngram_hashes,
    ngram_hashes_of_sizes,
    token_hash,
)
from cloneprobe.scan.lexer import (
    ID_HASH,
    KEPT_HASHES,
    NUM_HASH,
    STRINGS_AND_COMMENTS,
    code_tokens,
    lex,
    word_tokens,
)
from cloneprobe.scan.tokens import tokenize


def hashes(source: str) -> list[int]:
    return code_tokens([source]).document(0).tolist()


def test_a_hash_inside_a_string_is_not_a_comment():
    with_hash = hashes('s = "a # b" + t\n')
    plain = hashes('s = "x" + t\n')
    assert with_hash == plain
    assert len(with_hash) == 5  # s = STR + t: the `+ t` after the `#` is still code


def test_comments_and_docstrings_are_dropped_strings_are_one_token():
    documented = hashes('def f(a):\n    """Doc with # and \'quotes\'."""\n    # note\n'
                        '    return a + "lit"  # trailing\n')  # fmt: skip
    bare = hashes('def f(a):\n    return a + "other"\n')
    assert documented == bare


def test_nested_f_strings_stay_one_string_token():
    nested = hashes("x = f\"{f'{y}'}#\" ; z = 1\n")
    simple = hashes('x = f"a" ; z = 1\n')
    assert nested == simple


def test_renaming_and_layout_change_nothing():
    original = hashes("def total(values):\n    acc = 0\n    for v in values:\n"
                      "        acc += v.size\n    return acc\n")  # fmt: skip
    renamed = hashes("def s(xs):\n  t=0\n  for q in xs:\n      t+=q.size\n  return t")
    assert original == renamed
    attribute_changed = hashes("def s(xs):\n  t=0\n  for q in xs:\n      t+=q.length\n  return t")
    assert attribute_changed != original  # attribute names are kept


def test_builtins_and_keywords_keep_their_identity_other_names_do_not():
    tokens = hashes("len(items)\n")
    assert tokens[0] != int(ID_HASH) and tokens[2] == int(ID_HASH)


def test_python2_file_tokenizes():
    source = ('print "hello %s" % name\nexec code in ns\ntry:\n    x = 0777L\n'
              "except Exception, e:\n    raise E, 'msg'\n")  # fmt: skip
    assert len(hashes(source)) > 10
    assert [t.kind for t in tokenize(source)][:2] == ["keyword", "string"]


def test_binary_and_minified_junk_tokenize_without_error():
    rng = random.Random(7)
    junk = bytes(rng.randrange(256) for _ in range(20000)).decode("utf-8", "replace")
    minified = "function(a){return a.b?c:d}" * 2000 + '"unterminated \'\'\' """'
    batch = code_tokens([junk, minified, ""])
    assert len(batch.document(0)) > 0 and len(batch.document(2)) == 0
    assert tokenize(junk) and tokenize(minified)


def test_verifying_lexer_renames_blind_and_drops_docstrings():
    tokens = tokenize('def f(a):\n    """doc"""\n    return a.b(1, 2.5, rb"s")\n')
    assert [t.blind for t in tokens] == ["def", "x", "(", "x", ")", ":", "return", "x", ".",
                                         "x", "(", "1", ",", "1.0", ",", '"x"', ")"]  # fmt: skip


def test_ngram_hashes_are_stable_across_processes():
    """Never Python's salted hash(): another process with another hash seed gets the same
    values, and a constant has a pinned value."""
    assert constant_hash("ID") == int(ID_HASH) == 0xB0144334FBC22657
    code = "import numpy as np; from cloneprobe.scan.lexer import code_tokens; "
    code += "from cloneprobe.scan.hashing import ngram_hashes; "
    code += "tokens = code_tokens(['def f(a): return len(a) + 1']).document(0); "
    code += "print(ngram_hashes(tokens, 3).tolist())"
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    }
    here = ngram_hashes(code_tokens(["def f(a): return len(a) + 1"]).document(0), 3)
    assert outputs == {str(here.tolist()) + "\n"}
    assert here.dtype == np.uint64


def test_ngram_hashes_made_from_halves_are_each_sizes_own():
    """10-gram hashes joined from 5-gram polynomials equal those computed on their own, for
    any number of tokens (fewer than a window, one window, many)."""
    rng = np.random.default_rng(3)
    for count in (0, 3, 5, 9, 10, 11, 1000):
        tokens = rng.integers(0, 2**64, size=count, dtype=np.uint64)
        together = ngram_hashes_of_sizes(tokens, (10, 5, 6, 3))
        for n in (3, 5, 6, 10):
            assert together[n].tolist() == ngram_hashes(tokens, n).tolist(), (count, n)


def test_batched_word_hashes_are_each_words_own_chunk_polynomial():
    # the batch hashes every word with a few vector steps over 8-byte loads; each must still
    # be the word's own polynomial wherever it lies, cut at 64 bytes, UTF-8 included, also
    # at the very end of the batch (where the loads run past the data)
    words = ["abc", "x" * 100, "y" * 64, "abcdefgh", "abcdefghi", "z"]
    batch = word_tokens(["q " * 1000 + "a" * 100, " ".join(words)])
    assert batch.document(0)[-1] == token_hash(b"a" * 64)
    expected = [token_hash(w.encode()) for w in words]
    assert batch.document(1).tolist() == expected
    assert expected[1] == token_hash(b"x" * 64) != token_hash(b"x" * 63)
    assert len(set(expected)) == len(expected)
    attributes = [".\u00f1and\u00fa", "." + "w" * 80]  # attribute names keep their identity
    code = code_tokens(["pass\n" * 3000, "a" + "".join(attributes)])
    assert code.document(1).tolist() == [ID_HASH] + [token_hash(a.encode()) for a in attributes]


def test_every_kept_name_is_kept_and_no_other_name_is():
    names = ["len", "isinstance", "NotImplementedError", "self", "lambda", "match", "print"]
    others = ["lens", "isinstanc", "NotImplementedErrorX", "selfie", "x", "value_of_it"]
    tokens = code_tokens([" ".join(names), " ".join(others)])
    assert tokens.document(0).tolist() == [token_hash(n.encode()) for n in names]
    assert set(tokens.document(0).tolist()) <= set(KEPT_HASHES.tolist())
    assert tokens.document(1).tolist() == [int(ID_HASH)] * len(others)


PIECES = st.sampled_from(['"', "'", '"""', "'''", "#", "\\", "\n", " ", "x = ", "a", "; ",
                          'r"', "\\'", '\\"', "b" * 9])  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(PIECES, max_size=40).map("".join), min_size=1, max_size=4))
def test_comments_and_literals_are_where_the_pattern_finds_them_in_the_whole_text(texts):
    # the lexer runs the pattern on runs of bytes collapsed to one; the pieces must be the
    # ones the pattern finds in each whole text
    batch = lex(texts)
    found = []
    for number, text in enumerate(texts):
        place = int(batch.doc_starts[number])
        for index, piece in enumerate(STRINGS_AND_COMMENTS.split(text.encode())):
            if index % 2 and piece:
                found.append((place, place + len(piece)))
            place += len(piece)
    spans = zip(batch.literal_starts.tolist(), batch.literal_ends.tolist(), strict=True)
    assert list(spans) == found


def test_a_string_alone_on_its_line_is_a_docstring_and_dropped():
    assert hashes('x = 1\n  "doc"  # c\ny = 2\n') == hashes("x = 1\ny = 2\n")
    assert hashes('x = 1 ; "doc" ; y = 2\n') == hashes("x = 1 ; ; y = 2\n")
    assert hashes('x = "s"\n') != hashes("x = \n")
    assert hashes('f(\n  "arg")\n') != hashes("f(\n  )\n")  # after a bracket: an argument
    assert hashes('"a" "b"\nx\n') == hashes("x\n")  # adjacent literals on a line of their own


_WORD = rb"[A-Za-z0-9_\x80-\xff]"
PLAIN_CODE_TOKEN = re.compile(rb"\.[A-Za-z_\x80-\xff]" + _WORD + rb"*|" + _WORD + rb"+"
                              rb"|[^\t\n\x0b\x0c\r \x00]")  # fmt: skip
"""A code token of a text with no comment or literal, by the lexer's rule: `.name`, a run of
word bytes, or any other byte that is not blank."""
CODE_PIECES = st.sampled_from([".", "x", "5", "_", " ", "\n", "\t", "\x00", "\u00e9", "(",
                               "print", "..", ".5", "a.b", "1.e5", "+=", "\\", "Q" * 11,
                               "._"])  # fmt: skip


def plain_code_tokens(text: str) -> list[tuple[int, int]]:
    """(hash, byte offset) of each code token, one regular-expression match at a time."""
    kept = set(KEPT_HASHES.tolist())
    found = []
    for match in PLAIN_CODE_TOKEN.finditer(text.encode()):
        token = match.group()
        if len(token) > 1 and token[:1] == b".":
            value = token_hash(token)  # an attribute name keeps its identity
        elif re.fullmatch(_WORD + rb"+", token):
            value = token_hash(token)
            value = (NUM_HASH if token[:1].isdigit() else value if value in kept
                     else ID_HASH)  # fmt: skip
        else:
            value = constant_hash(f"byte:{token[0]}")
        found.append((int(value), match.start()))
    return found


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(CODE_PIECES, max_size=30).map("".join), min_size=1, max_size=4))
def test_code_tokens_of_code_without_literals_follow_the_rule_token_by_token(texts):
    # the lexer finds words as runs of word bytes and `.name` from the run after a dot; a
    # dot before a digit (`.5`) is a token of its own and the digits another
    batch = code_tokens(texts)
    for number, text in enumerate(texts):
        start, stop = int(batch.starts[number]), int(batch.starts[number + 1])
        found = list(zip(batch.hashes[start:stop].tolist(), batch.offsets[start:stop].tolist(),
                         strict=True))  # fmt: skip
        assert found == plain_code_tokens(text)

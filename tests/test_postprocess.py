"""`understand`: what a model's output means for the prompt it answered.

Continuations cut at stop sequences, completions that repeat the prompt, chat answers with
fenced code, truncated output and docstrings flattened onto the `def` line.
"""

from __future__ import annotations

import ast

import pytest

from cloneprobe.benchmarks import load_humaneval
from cloneprobe.clones import FragmentExtractor, SourceFile, get_language
from cloneprobe.generation import HUMANEVAL_STOPS, understand
from cloneprobe.generation.postprocess import truncate_at_stops

HUMANEVAL = load_humaneval()
CLOSE = HUMANEVAL.get("HumanEval/0")  # has_close_elements, a nested-loop body
TRUNCATE = HUMANEVAL.get("HumanEval/2")  # truncate_number, a one-line body


def fragments(program: str) -> dict:
    """The clone detector's function fragments of a program, by function name."""
    extractor = FragmentExtractor(get_language("python"))
    return {f.name: f for f in extractor.extract(SourceFile("sample.py", program))}


def module_function_names(program: str) -> list[str]:
    tree = ast.parse(program)
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]


def calls_to(program: str, name: str) -> int:
    return sum(
        1
        for node in ast.walk(ast.parse(program))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
    )


# --- continuations -------------------------------------------------------------------------


def test_plain_continuation_is_the_completion_and_the_program_is_prompt_plus_it():
    understood = understand(CLOSE.canonical_solution, CLOSE.prompt, CLOSE.entry_point)
    assert understood.form == "continuation"
    assert understood.completion == CLOSE.canonical_solution
    assert understood.program == CLOSE.prompt + CLOSE.canonical_solution
    assert module_function_names(understood.program) == ["has_close_elements"]


@pytest.mark.parametrize(
    "tail",
    [
        "\n\ndef check(candidate):\n    assert candidate([1.0, 2.0], 0.5) is False\n",
        "\n\nclass TestCloseElements:\n    pass\n",
        '\n\nif __name__ == "__main__":\n    import doctest\n    doctest.testmod()\n',
        "\nprint(has_close_elements([1.0, 2.0, 3.0], 0.5))\n",
        "\n# Test the function\nhas_close_elements([1.0], 0.1)\n",
    ],
    ids=["def", "class", "if", "print", "comment"],
)
def test_continuation_is_cut_at_humaneval_stop_sequences(tail):
    text = CLOSE.canonical_solution + tail
    understood = understand(text, CLOSE.prompt, CLOSE.entry_point, HUMANEVAL_STOPS)
    assert understood.form == "continuation"
    assert understood.completion.rstrip() == CLOSE.canonical_solution.rstrip()
    assert tail.strip() not in understood.program
    assert module_function_names(understood.program) == ["has_close_elements"]


def test_truncate_at_stops_cuts_at_the_earliest_of_several_stops():
    text = "    return x\nprint(x)\ndef g():\n    pass\n"
    assert truncate_at_stops(text, HUMANEVAL_STOPS) == ("    return x", True)
    assert truncate_at_stops("    return x\n", HUMANEVAL_STOPS) == ("    return x\n", False)


def test_stop_sequences_inside_the_indented_body_do_not_cut_it():
    # `\nif` and `\n#` only match at column 0; the body's own `if` and comments stay.
    body = "    # look at every pair\n    if not numbers:\n        return False\n    return True\n"
    understood = understand(body, CLOSE.prompt, CLOSE.entry_point, HUMANEVAL_STOPS)
    assert understood.completion == body


def test_continuation_followed_by_a_helper_function_keeps_the_helper():
    text = (
        "    return any(_closer(a, b, threshold) for i, a in enumerate(numbers)\n"
        "               for b in numbers[i + 1:])\n"
        "\n\n"
        "def _closer(a: float, b: float, threshold: float) -> bool:\n"
        "    return abs(a - b) < threshold\n"
        "\n\n"
        "print(has_close_elements([1.0, 2.0], 0.5))\n"
    )
    understood = understand(text, CLOSE.prompt, CLOSE.entry_point)
    assert understood.form == "continuation"
    assert "def _closer(a: float, b: float, threshold: float) -> bool:" in understood.completion
    assert "print(" not in understood.completion
    assert module_function_names(understood.program) == ["has_close_elements", "_closer"]
    assert calls_to(understood.program, "print") == 0


@pytest.mark.parametrize(
    "prose",
    [
        "\nThis function compares every pair of numbers, so it runs in O(n^2) time.\n",
        "\n\nExplanation:\n- the outer loop picks a number\n- the inner loop compares it\n",
    ],
    ids=["sentence", "bullet-list"],
)
def test_prose_after_a_continuation_is_dropped(prose):
    text = CLOSE.canonical_solution + prose
    understood = understand(text, CLOSE.prompt, CLOSE.entry_point, HUMANEVAL_STOPS)
    assert understood.completion.rstrip() == CLOSE.canonical_solution.rstrip()
    ast.parse(understood.program)


# --- completions that repeat the prompt ----------------------------------------------------


def test_completion_repeating_the_prompt_is_full_and_is_its_own_program():
    text = CLOSE.prompt + CLOSE.canonical_solution
    understood = understand(text, CLOSE.prompt, CLOSE.entry_point, HUMANEVAL_STOPS)
    assert understood.form == "full"
    assert understood.program == CLOSE.prompt + CLOSE.canonical_solution
    assert understood.completion == understood.program  # not the prompt twice


def test_repeated_prompt_keeps_its_import_and_drops_a_trailing_print():
    text = CLOSE.prompt + CLOSE.canonical_solution + "\n\nprint(has_close_elements([1.0], 0.5))\n"
    understood = understand(text, CLOSE.prompt, CLOSE.entry_point, HUMANEVAL_STOPS)
    assert understood.form == "full"
    assert understood.program.startswith("from typing import List\n")
    assert calls_to(understood.program, "print") == 0


def test_prose_before_and_after_an_unfenced_full_function_is_dropped():
    code = TRUNCATE.prompt + TRUNCATE.canonical_solution
    text = "Here is the completed function:\n\n" + code + "\nIt keeps the fractional part.\n"
    understood = understand(text, TRUNCATE.prompt, TRUNCATE.entry_point)
    assert understood.form == "full"
    assert "Here is" not in understood.program
    assert "fractional part" not in understood.program
    assert module_function_names(understood.program) == ["truncate_number"]


# --- chat answers with fenced code ---------------------------------------------------------

CHAT_ANSWER = '''Sure! Here is an implementation that checks every pair of numbers:

```python
from typing import List


def _distance(a: float, b: float) -> float:
    return abs(a - b)


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    """Check whether any two numbers are closer than threshold."""
    for i, a in enumerate(numbers):
        for j, b in enumerate(numbers):
            if i != j and _distance(a, b) < threshold:
                return True
    return False


print(has_close_elements([1.0, 2.0, 3.0], 0.5))
assert has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)

if __name__ == "__main__":
    import doctest
    doctest.testmod()
```

The helper `_distance` keeps the comparison readable. The loops make it O(n^2).
'''


def test_chat_answer_keeps_the_entry_point_and_its_helper_from_the_fence():
    understood = understand(CHAT_ANSWER, CLOSE.prompt, CLOSE.entry_point)
    assert understood.form == "fenced"
    assert understood.completion == understood.program
    assert module_function_names(understood.program) == ["_distance", "has_close_elements"]
    assert understood.program.startswith("from typing import List\n")


def test_chat_answer_drops_prints_asserts_main_blocks_and_prose():
    program = understand(CHAT_ANSWER, CLOSE.prompt, CLOSE.entry_point).program
    tree = ast.parse(program)
    assert calls_to(program, "print") == 0
    assert not any(isinstance(node, (ast.Assert, ast.If)) for node in tree.body)
    assert "__main__" not in program
    assert "Sure!" not in program and "readable" not in program
    assert "```" not in program


def test_chat_answer_function_reaches_the_clone_detector_whole():
    program = understand(CHAT_ANSWER, CLOSE.prompt, CLOSE.entry_point).program
    found = fragments(program)
    assert set(found) == {"_distance", "has_close_elements"}
    assert not found["has_close_elements"].has_errors
    assert found["has_close_elements"].size == 6  # header, five statements; no docstring


def test_the_fence_that_defines_the_entry_point_is_chosen_over_an_earlier_one():
    text = (
        "You can call it like this:\n\n```python\nprint(truncate_number(3.5))\n```\n\n"
        "And here is the function:\n\n```python\n"
        "def truncate_number(number: float) -> float:\n    return number % 1.0\n```\n"
    )
    understood = understand(text, TRUNCATE.prompt, TRUNCATE.entry_point)
    assert understood.form == "fenced"
    assert understood.program == (
        "def truncate_number(number: float) -> float:\n    return number % 1.0\n"
    )


def test_fence_holding_only_a_body_is_appended_to_the_prompt():
    text = "The body is:\n\n```python\n    return number % 1.0\n```\n"
    understood = understand(text, TRUNCATE.prompt, TRUNCATE.entry_point)
    assert understood.form == "fenced"
    assert understood.program == TRUNCATE.prompt + "    return number % 1.0\n"
    ast.parse(understood.program)


def test_unterminated_fence_of_truncated_output_still_gives_the_code():
    text = (
        "Here you go:\n\n```py\nfrom typing import List\n\n\n"
        "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
        "    numbers = sorted(numbers)\n"
        "    for a, b in zip(numbers, numbers[1:]):\n"
        "        if b - a < threshold:\n"
        "            return True\n"
        "    return False\n"
    )
    understood = understand(text, CLOSE.prompt, CLOSE.entry_point)
    assert understood.form == "fenced"
    assert "```" not in understood.program
    assert module_function_names(understood.program) == ["has_close_elements"]
    assert not fragments(understood.program)["has_close_elements"].has_errors


def test_fence_indented_inside_a_markdown_list_keeps_its_code():
    text = (
        "1. Write the function:\n\n"
        "   ```python\n"
        "   def truncate_number(number: float) -> float:\n"
        "       return number % 1.0\n"
        "   ```\n"
        "2. Call it with a float.\n"
    )
    understood = understand(text, TRUNCATE.prompt, TRUNCATE.entry_point)
    assert module_function_names(understood.program) == ["truncate_number"]


# --- damaged prompts and truncated output --------------------------------------------------

FLATTENED = [
    'def truncate_number(number: float) -> float: """Return the decimal part.""" '
    "return number % 1.0\n",
    'def truncate_number(number: float) -> float: """Return the decimal part."""\n'
    "    integer = int(number)\n"
    "    return number - integer\n",
    "Sure:\n```python\n"
    'def truncate_number(number: float) -> float: """Return the decimal part.""" '
    "return number % 1.0\n```\n",
]


@pytest.mark.parametrize("text", FLATTENED, ids=["one-line", "body-below", "fenced"])
def test_docstring_flattened_onto_the_def_line_is_repaired_so_the_function_parses(text):
    code = text.split("```python\n")[-1].split("```")[0]
    with pytest.raises(SyntaxError):
        ast.parse(code)  # the damage is real: the output as given does not parse
    understood = understand(text, TRUNCATE.prompt, TRUNCATE.entry_point)
    tree = ast.parse(understood.program)
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef) and function.name == "truncate_number"
    assert ast.get_docstring(function) == "Return the decimal part."
    assert isinstance(function.body[-1], ast.Return)
    fragment = fragments(understood.program)["truncate_number"]
    assert not fragment.has_errors
    assert not fragment.one_liner


def test_continuation_of_a_prompt_with_a_flattened_docstring_is_repaired():
    prompt = 'def add_one(x: int) -> int: """Return x plus one."""\n'
    body = "    y = x + 1\n    return y\n"
    understood = understand(body, prompt, "add_one", HUMANEVAL_STOPS)
    function = ast.parse(understood.program).body[0]
    assert isinstance(function, ast.FunctionDef) and len(function.body) == 3
    fragment = fragments(understood.program)["add_one"]
    assert not fragment.has_errors and not fragment.one_liner


def test_continuation_truncated_mid_statement_still_reaches_the_clone_detector():
    body = CLOSE.canonical_solution
    cut = body[: body.index("abs(elem - elem2)") + len("abs(elem -")]
    understood = understand(cut, CLOSE.prompt, CLOSE.entry_point, HUMANEVAL_STOPS)
    assert understood.form == "continuation"
    assert understood.completion == cut
    with pytest.raises(SyntaxError):
        ast.parse(understood.program)
    fragment = fragments(understood.program)["has_close_elements"]
    assert fragment.has_errors
    assert fragment.size >= 4  # header, two loops and the if survive


def test_repeated_prompt_truncated_mid_statement_still_reaches_the_clone_detector():
    body = CLOSE.canonical_solution
    text = CLOSE.prompt + body[: body.index("if distance") + len("if dist")]
    understood = understand(text, CLOSE.prompt, CLOSE.entry_point, HUMANEVAL_STOPS)
    assert understood.form == "full"
    with pytest.raises(SyntaxError):
        ast.parse(understood.program)
    fragment = fragments(understood.program)["has_close_elements"]
    assert fragment.has_errors
    assert fragment.size >= 4

"""A clone pair on the HTML page: what it shows (its tier and why), the canonical solution and
the sample side by side as written, the lines as the detector compared them (renamed tokens)
folded under it, and the closest independent solutions of the task when the evidence rule
measured them."""

from __future__ import annotations

from collections.abc import Sequence

from cloneprobe.audit.audit_report import EvidencePair
from cloneprobe.reports.align import align_lines, shape_of
from cloneprobe.reports.safe_text import html_text as escape

from .glossary import CLONE_TYPE_MEANING, STANDING_MEANING, TIER_MEANING

LEGEND = ('<p class="legend"><span class="diff">lines that differ</span> '
          '<span class="gap">lines on one side only (e.g. the prompt\'s docstring, which is '
          "not compared)</span></p>")
INDEPENDENT_SHOWN = 3
"""Independent solutions shown per pair (the closest first)."""


def _side_by_side(left: list[str], right: list[str], headings: tuple[str, str],
                  key=None) -> str:  # fmt: skip
    def css(same: bool, a: str, b: str) -> str:
        return "" if same else ("diff" if a.strip() and b.strip() else "gap")

    rows = "".join(
        f'<tr class="{css(same, a, b)}"><td>{escape(a)}</td><td>{escape(b)}</td></tr>'
        for same, a, b in align_lines(left, right, key)
    )
    return (f'<table class="code"><tr><th class="l">{escape(headings[0])}</th>'
            f'<th class="l">{escape(headings[1])}</th></tr>{rows}</table>')  # fmt: skip


def _lines(code) -> list[str]:
    if isinstance(code, str):
        return code.splitlines()
    return [str(line) for line in code or []]


def independent_solutions_html(solutions: list) -> str:
    """The closest solutions of the task written without its canonical in view (other model
    families, reference solutions): label, similarity and code, closest first."""
    if not solutions:
        return ""
    ordered = sorted(solutions, key=lambda s: -(s.get("similarity") or 0))[:INDEPENDENT_SHOWN]
    blocks = []
    for solution in ordered:
        label = next((str(solution[k]) for k in ("label", "model", "source", "name")
                      if solution.get(k)), "independent solution")  # fmt: skip
        similarity = solution.get("similarity")
        shown = f"{label}" + (f" ({similarity}% similar to the canonical)"
                              if similarity is not None else "")  # fmt: skip
        code = _lines(solution.get("code") or solution.get("lines") or solution.get("program"))
        blocks.append(f"<p>{escape(shown)}</p><pre>{escape(chr(10).join(code))}</pre>")
    more = len(solutions) - len(ordered)
    extra = f"<p>{more} more in the evidence file.</p>" if more > 0 else ""
    return (f'<details class="independent"><summary>Closest independent solutions of the task '
            f"({len(solutions)})</summary>{''.join(blocks)}{extra}</details>")  # fmt: skip


def pair_html(pair: EvidencePair, index: int, notes: Sequence[str] = (),
              standing: str | None = None) -> str:  # fmt: skip
    """One clone pair, anchored `pair-<index>` (its place in the report's `evidence`), with
    `notes` (its task's same-task convergence figure and closest independent solutions) and,
    for candidate evidence, its `standing` under that null (verdict_summary.pair_standing):
    only a memorized one is shown as evidence of memorization."""
    tier = pair.get("tier")
    meaning = STANDING_MEANING.get(standing or "") or TIER_MEANING.get(tier or "", tier)
    verdict = (f"{meaning} (strength {pair.get('strength', 0):.2f} of 1)."
               if tier else "A clone (no evidence rule applied).")  # fmt: skip
    kind = CLONE_TYPE_MEANING.get(str(pair["type"]), f"Type-{pair['type']}")
    title = (f"{pair['task_id']}: {pair['model']}, t={pair['temperature']:g}, "
             f"{pair['prompt_set']} prompts, sample {pair['sample']}")  # fmt: skip
    reasons = "; ".join(pair.get("reasons") or [])
    about = (f"{kind}; {pair['similarity']}% of the compared lines in common with the "
             f"canonical solution of {pair['canonical_task']}.")  # fmt: skip
    headings = (f"canonical solution (lines {pair['canonical_lines'][0]}-"
                f"{pair['canonical_lines'][1]})",
                f"sample (lines {pair['sample_lines'][0]}-{pair['sample_lines'][1]})")
    code = pair.get("code")
    compared = pair["compared"]
    renamed = _side_by_side(compared["canonical"], compared["sample"], headings)
    if code:
        shown = (_side_by_side(code["canonical"], code["sample"], headings, shape_of)
                 + '<details class="compared"><summary>As the detector compared them (pretty-'
                 f"printed{', renamed' if str(pair['type']) != '1' else ''})</summary>"
                 f"{renamed}</details>")  # fmt: skip
    else:  # a report written before the code was kept
        shown = renamed
    css = f"pair tier-{tier}" if tier else "pair"
    if standing and standing != "memorized":
        css = "pair tier-candidate"  # not shown as evidence: convergence explains it
    return (f'<div class="{css}" id="pair-{index}"><h3>{escape(title)}</h3>'
            f'<p class="tier">{escape(verdict)}</p><p>{escape(about)}</p>'
            + (f'<p class="why">Why: {escape(reasons)}</p>' if reasons else "")
            + "".join(f'<p class="why">{escape(note)}</p>' for note in notes)
            + LEGEND + shown + independent_solutions_html(pair.get("independent_solutions") or [])
            + "</div>")  # fmt: skip


def display_order(pairs) -> list[tuple[int, EvidencePair]]:
    """Pairs with their index, evidence first and strongest first (then as found)."""
    rank = {"evidence": 0, "similar": 1, "uninformative": 2}
    return sorted(enumerate(pairs), key=lambda item: (rank.get(item[1].get("tier"), 3),
                                                      -(item[1].get("strength") or 0)))

"""The same-task convergence null: how often an independent solver of the task writes code at
least as close to the canonical as the model's evidence.

Independent solvers of a task (`figures.Solver`) come from the shipped panel figures, the other
models of the report, the files the user names with `--panel`, and the model's own samples
under disguised prompts. Models of the model's own family never count (they share its training
data and habits); the model's disguised samples count as samples, not as a family.

A solver's sample *reaches* the evidence when it is as close on either measure of closeness,
up to what trivial style choices change: its structure (blind-renamed tokens: the same code
up to renaming) or its verbatim similarity is within `margin` of the evidence's. Per task with
evidence:

- **convergent**: at least `convergent_families` independent families reach it (with the
  model, two unrelated families then write the same code): never memorized, whatever else;
- otherwise the null rate p0 = (R + 0.5) / (N + 1) over the N independent samples, R of them
  reaching (a Jeffreys-style half count, so no rate is 0), and the task's p-value is the
  binomial tail P(X >= k) of the model's k evidence samples among its n samples of the task;
- the p-values of a group's tasks with evidence are adjusted for their number with
  Benjamini-Hochberg (the false-discovery rate over the benchmark's tasks is held at `alpha`):
  **memorized** is a task whose evidence is not convergent and whose adjusted q <= alpha;
- an exact copy of a short canonical (no evidence by itself: any solver may write it) is
  tested the same way (`basis` "disguise") only for a model whose own disguised-prompt samples
  are in the report, and only against them and at least `min_families` independent families:
  it is convergent when the model writes it under the disguise too, and memorized ("resting
  on the disguise") when neither the families nor the disguised samples reach it and its q
  is at most alpha;
- a task no independent solver of the task was measured on (no panel, no other family, no
  disguised sample) is **missing**, and one measured on fewer than `min_families` independent
  families and no disguised sample is **thin** (0 of 2 families is no rarity): the verdict
  says what is missing and claims no memorization.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from math import comb

from .figures import Solver


@dataclass(frozen=True)
class ConvergenceRule:
    margin: float = 0.15
    """A sample within this much of the evidence's structure or verbatim similarity reaches
    it: trivial style choices move these measures that much (an `else:` after a `return`, a
    temporary inlined: about 3-6% each on a 60-token body). With 0.02, phi-1's Heron formula
    for HumanEval/71 (94% structure; GPT-3.5, GPT-4 and WizardCoder at 84%) was called
    memorized and a blind reading judged it what a competent solver writes
    (docs/evidence-convergence.md)."""
    convergent_families: int = 1
    """Independent families reaching the evidence that make the task convergent."""
    alpha: float = 0.1
    """The false-discovery rate held over a group's tasks with evidence (Benjamini-Hochberg)."""
    min_families: int = 3
    """Independent families a rarity needs to be measured on (unless disguised samples of the
    model itself were measured too)."""
    short_copies: bool = True
    """Test exact copies of short canonicals against the model's own disguised samples and
    the independent families (`basis` "disguise"); False: never memorized, as before."""

    def as_dict(self) -> dict:
        return asdict(self)


DEFAULT_CONVERGENCE = ConvergenceRule()


def reaches(closeness: tuple[float, float], target: tuple[float, float], margin: float) -> bool:
    """A sample (verbatim, structure) as close as the target on either measure."""
    return closeness[1] >= target[1] - margin or closeness[0] >= target[0] - margin


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    return min(1.0, sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1)))


def benjamini_hochberg(p_values: dict[str, float]) -> dict[str, float]:
    """Adjusted q-values (monotone step-up), keyed like `p_values`."""
    ordered = sorted(p_values.items(), key=lambda item: item[1])
    m = len(ordered)
    q: dict[str, float] = {}
    running = 1.0
    for rank in range(m, 0, -1):
        key, p = ordered[rank - 1]
        running = min(running, p * m / rank)
        q[key] = round(running, 6)
    return q


def task_null(
    task_id: str,
    target: tuple[float, float],
    family: str,
    solvers: Iterable[Solver],
    evidence_samples: int,
    samples: int,
    rule: ConvergenceRule = DEFAULT_CONVERGENCE,
    basis: str = "evidence",
) -> dict:
    """The convergence figures of one task's evidence (before the FDR adjustment). `basis`:
    `evidence` (the model's clone evidence), or `disguise` (its exact copies of a short
    canonical, which any solver may write: tested only against the model's own disguised
    samples and at least `min_families` independent families, else missing)."""
    independent = [s for s in solvers if s.origin == "disguised" or s.family != family]
    families: dict[str, bool] = {}
    reaching = total = disguised_reaching = disguised_total = 0
    closest = []
    for solver in independent:
        hits = sum(reaches(c, target, rule.margin) for c in solver.closeness)
        if solver.origin == "disguised":
            disguised_reaching += hits
            disguised_total += len(solver.closeness)
        elif solver.closeness:
            families[solver.family] = families.get(solver.family, False) or hits > 0
        reaching += hits
        total += len(solver.closeness)
        if solver.best is not None:
            closest.append({"solver": solver.name, "family": solver.family,
                            "origin": solver.origin, "verbatim": solver.best[0],
                            "structure": solver.best[1], "reaching": hits,
                            "samples": len(solver.closeness)})  # fmt: skip
    closest.sort(key=lambda c: (-c["structure"], -c["verbatim"]))
    families_reaching = sorted(f for f, hit in families.items() if hit)
    p0 = (reaching + 0.5) / (total + 1)
    p_value = binomial_tail(evidence_samples, samples, p0)
    convergent = len(families_reaching) >= rule.convergent_families
    if basis == "disguise" and disguised_reaching:
        convergent = True  # the model writes the short canonical under both: it converges
    missing = total == 0
    if basis == "disguise":
        thin = not missing and (len(families) < rule.min_families or disguised_total == 0)
    else:
        thin = not missing and len(families) < rule.min_families and disguised_total == 0
    return {
        "task_id": task_id,
        "basis": basis,
        "target": {"verbatim": target[0], "structure": target[1]},
        "family": family,
        "families": len(families),
        "families_reaching": families_reaching,
        "samples": total,
        "samples_reaching": reaching,
        "disguised": disguised_total,
        "disguised_reaching": disguised_reaching,
        "evidence_samples": evidence_samples,
        "model_samples": samples,
        "p0": round(p0, 6),
        "p": 1.0 if convergent or missing else round(p_value, 8),
        "convergent": convergent,
        "missing": missing or thin,
        "thin": thin,
        "closest": closest[:3],
    }


def decide(nulls: dict[str, dict], rule: ConvergenceRule = DEFAULT_CONVERGENCE) -> dict:
    """Adds `q` (Benjamini-Hochberg over the tasks tested: not convergent, not missing),
    `memorized` and the one-line `figure` to each task's null; returns them."""
    tested = {t: n["p"] for t, n in nulls.items() if not n["convergent"] and not n["missing"]}
    q = benjamini_hochberg(tested)
    for task_id, null in nulls.items():
        null["tested"] = len(tested)
        null["q"] = q.get(task_id)
        null["memorized"] = task_id in q and q[task_id] <= rule.alpha
        null["figure"] = figure_line(null, rule)
    return nulls


def figure_line(null: dict, rule: ConvergenceRule = DEFAULT_CONVERGENCE) -> str:
    """ "0 of 3 panel families and 1 of 40 disguised samples reach this ..." for reasons."""
    if null.get("basis") == "disguise":
        return "a copy of a short canonical, " + _figure(null, rule)
    return _figure(null, rule)


def _figure(null: dict, rule: ConvergenceRule) -> str:
    if null.get("thin") and null.get("basis") == "disguise":
        return (
            f"tested against {null['families']} independent families and "
            f"{null['disguised']} of the model's disguised-prompt samples (a short canonical "
            f"needs both, at least {rule.min_families} families): not tested"
        )
    if null.get("thin"):
        return (
            f"convergence measured on only {null['families']} independent families and no "
            f"disguised samples (at least {rule.min_families} families needed; "
            f"{null['samples_reaching']} of {null['samples']} of their samples reach this): "
            "add --panel files of other families or sample the disguised prompts"
        )
    if null["missing"]:
        return (
            "convergence not measured: no independent solver of the task (no panel figures, "
            "no model of another family, no --panel file, no disguised samples)"
        )
    parts = [f"{len(null['families_reaching'])} of {null['families']} independent families"]
    if null["disguised"]:
        parts.append(f"{null['disguised_reaching']} of {null['disguised']} disguised-prompt "
                     "samples")  # fmt: skip
    target = null["target"]
    text = (f"{' and '.join(parts)} reach this ({target['structure']:.0%} structure, "
            f"{target['verbatim']:.0%} verbatim; {null['samples_reaching']} of "
            f"{null['samples']} independent samples)")  # fmt: skip
    if null["convergent"]:
        writers = [*null["families_reaching"]]
        if null.get("basis") == "disguise" and null["disguised_reaching"]:
            writers.append("the model itself under the disguised prompts")
        return f"{text}: convergent, written by {', '.join(writers)}"
    q = null.get("q")
    verdict = "rare" if null.get("memorized") else "not rare enough"
    if null.get("basis") == "disguise" and null.get("memorized"):
        verdict = "rare, resting on the disguise"
    return (f"{text}: {verdict}, p = {null['p']:.2g}, Benjamini-Hochberg q = "
            f"{q:.2g} over {null['tested']} tasks tested (FDR {rule.alpha:g})")  # fmt: skip


def closest_text(null: dict) -> list[str]:
    """The closest independent solutions, one line each."""
    return [
        f"{c['solver']} ({c['family']}, {c['origin']}): best {c['structure']:.0%} structure, "
        f"{c['verbatim']:.0%} verbatim; {c['reaching']} of {c['samples']} reach"
        for c in null.get("closest", [])
    ]


def solvers_from_counts(name: str, family: str, origin: str,
                        counts: Sequence[tuple[tuple[int, int], int]]) -> Solver:  # fmt: skip
    """A solver from per-task closeness counts in percent ((verbatim, structure), count)."""
    closeness = tuple((v / 100, s / 100) for (v, s), n in counts for _ in range(n))
    return Solver(name, family, origin, len(closeness), closeness)

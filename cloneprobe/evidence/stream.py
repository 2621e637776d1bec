"""The evidence view of a streamed audit: what needs every sample is computed before the
stream (a bounded chance pool of other tasks' answers, the reference solutions' features),
each verdict is tiered as it arrives, and per-task evidence counts live in the groups.

Memory is bounded by the pool (`CHANCE_POOL` programs plus one per task while it is read),
the benchmark's canonicals and the per-task counts, never by the number of samples.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from math import ceil

from cloneprobe.benchmarks.selection import task_order
from cloneprobe.errors import UserError

from .null_model import (
    CHANCE_POOL,
    chance_rates,
    features_or_none,
    load_reference_solutions,
    reference_features,
)
from .panel.convergence import (
    ConvergenceRule,
    decide,
    solvers_from_counts,
    task_null,
)
from .panel.families import family_of
from .panel.figures import Solver, shipped_panel
from .tiers import (
    DEFAULT_RULE,
    Assessment,
    EvidenceRule,
    NullContext,
    assess_pair,
    sample_assessment,
)


@dataclass(frozen=True)
class SampleEvidence:
    """A sample's tier (None: no non-trivial clone pair) with its pairs' assessments, aligned
    with the verdict's pairs."""

    tier: str | None
    strength: float | None
    reasons: tuple[str, ...]
    pairs: tuple[Assessment, ...]
    short_copy: bool = False
    """Its best pair is an exact copy of a short canonical (`Assessment.short_copy`)."""


def bounded_chance_pool(samples: Iterable, size: int = CHANCE_POOL) -> list[tuple[str, str]]:
    """(task_id, program) of the samples `null_model.chance_pool` picks from all of them (the
    first ones of each task in turn), keeping at most ceil(size / tasks seen) per task while
    reading: the pool needs no more of any task."""
    by_task: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for sample in samples:
        kept = by_task[sample.task_id]
        limit = ceil(size / len(by_task))
        if len(kept) < limit:
            kept.append((sample.task_id, sample.program or ""))
        if len(kept) == 1 and len(by_task) > 1:  # a new task lowers every task's share
            for members in by_task.values():
                del members[ceil(size / len(by_task)):]
    ordered = [item for task in sorted(by_task) for item in by_task[task]]
    return ordered


class StreamedEvidence:
    """Tiers verdicts one at a time against their own canonical."""

    def __init__(self, canonicals, settings, samples: Iterable,
                 rule: EvidenceRule = DEFAULT_RULE) -> None:  # fmt: skip
        self.canonicals, self.rule = canonicals, rule
        self.convergence_rule: ConvergenceRule = settings.convergence
        self.families = dict(settings.families or ())
        self.panel = shipped_panel() if canonicals.benchmark.name == "humaneval" else None
        panel_models: set[str] = set()
        self.file_solvers = panel_file_solvers(canonicals, settings, self.families, panel_models)
        store = getattr(samples, "store", None)
        if self.families and store is not None:
            check_named_families(self.families, store, panel_models)
        self.chance = chance_rates(canonicals, settings, bounded_chance_pool(samples))
        self.references: dict[str, tuple] = {}
        if settings.reference_solutions is not None:
            programs = load_reference_solutions(settings.reference_solutions,
                                                canonicals.benchmark)  # fmt: skip
            self.references = reference_features(canonicals, programs)
        self.seen_tasks: set[str] = set()

    def informative(self, task_id: str) -> bool:
        profile = self.canonicals.profile(task_id)
        return profile is not None and profile.informative

    def assess(self, task_id: str, verdict) -> SampleEvidence:
        """The sample's tier with its pairs' assessments (aligned with `verdict.pairs`)."""
        self.seen_tasks.add(task_id)
        hits, compared = self.chance.get(task_id, (0, 0))
        null = NullContext(
            chance_rate=hits / compared if compared else None,
            chance_compared=compared,
            references=self.references.get(task_id, ()),
        )
        assessments = tuple(
            assess_pair(pair, task_id, self.canonicals.profile(pair["canonical_task"]),
                        features_or_none(pair.get("features")), null, self.rule)
            for pair in verdict.pairs
        )  # fmt: skip
        real = [a for a, p in zip(assessments, verdict.pairs, strict=True) if not p["trivial"]]
        best = sample_assessment(real)
        return SampleEvidence(
            tier=best.tier if best else None,
            strength=best.strength if best else None,
            reasons=best.reasons if best else (),
            pairs=assessments,
            short_copy=bool(best and best.short_copy),
        )

    def disguise_leaks(self, sample) -> list[str]:
        """Original names a disguised-prompt sample writes that its prompt no longer shows (and
        that the disguised prompt's words do not make natural)."""
        from ..benchmarks.disguise import leaked_names
        from ..benchmarks.prompts import disguise_renames, disguised_prompt
        from .canonical_profile import NAME_PART, natural_name, prompt_stems

        renames = disguise_renames(sample.prompt_set, sample.task_id)
        prompt = disguised_prompt(sample.task_id) if renames else None
        if not renames or prompt is None:
            return []
        stems = prompt_stems(prompt)

        def natural(name: str) -> bool:
            # a one-word name (`fib` for a Fibonacci function, `lst`, `decimal` for base ten,
            # `strings` for a List[str]) is what a solver who never saw the original prompt
            # writes: the untrained base model of the positive control wrote these three under
            # the disguise. Only a compound name (`has_close_elements`) tells memory.
            return len(NAME_PART.findall(name)) < 2 or natural_name(name, stems)

        return leaked_names(sample.program or "", renames, prompt, natural)

    def family(self, model: str) -> str:
        return family_of(model, self.families)

    def solvers(self, task_id: str, group, groups) -> list[Solver]:
        """Independent solvers of `task_id` for `group`'s model: the shipped panel, the other
        models of the report (their original-prompt groups), the --panel files and the
        model's own disguised-prompt groups."""
        found = list(self.panel.solvers(task_id)) if self.panel else []
        found += self.file_solvers.get(task_id, [])
        for other in groups:
            counts = other.closeness.get(task_id)
            if other is group or not counts:
                continue
            if other.model == group.model:
                if other.prompt_set != "disguised" or group.prompt_set == "disguised":
                    continue
                origin = "disguised"
            elif other.prompt_set != "original":
                continue
            else:
                origin = "store"
            found.append(solvers_from_counts(other.model_label or other.model,
                                             self.family(other.model), origin,
                                             sorted(counts.items())))  # fmt: skip
        return found

    def convergence(self, group, groups) -> dict[str, dict]:
        """The convergence null of each of the group's tasks with evidence, FDR-adjusted."""
        family = self.family(group.model)
        tested = [(group.evidence_best, {t: e[0] for t, e in group.evidence.items()}, "evidence")]
        if self.convergence_rule.short_copies and group.prompt_set == "original" and any(
                other.model == group.model and other.prompt_set == "disguised"
                for other in groups):  # fmt: skip
            # exact copies of short canonicals: only the model's own disguised samples (with
            # the independent families) can tell memory from convergence, so only then tested
            tested.append((group.short_best, group.short_copies, "disguise"))
        nulls = {}
        for best, reaching, basis in tested:
            for task_id, (v, s) in sorted(best.items(), key=lambda item: task_order(item[0])):
                if task_id not in nulls:  # a task with evidence is tested on its evidence
                    nulls[task_id] = task_null(
                        task_id, (v / 100, s / 100), family,
                        self.solvers(task_id, group, groups), reaching[task_id],
                        group.evidence[task_id][2], self.convergence_rule, basis=basis,
                    )  # fmt: skip
        decided = decide(nulls, self.convergence_rule)
        for task_id, names in group.leaks.items():
            if task_id in decided:
                named = ", ".join(f"`{n}`" for n in names)
                figure = (f"writes {named} under the disguised prompt, the original prompt's "
                          "name(s) it no longer shows: memory of the original prompt, evidence "
                          "by itself")  # fmt: skip
                decided[task_id].update(memorized=True, leaked=names, figure=figure)
        return decided

    def uninformative(self) -> list[dict]:
        """The report's tasks whose canonical is mostly prompt code."""
        found = []
        for task_id in sorted(self.seen_tasks):
            profile = self.canonicals.profile(task_id)
            if profile is not None and not profile.informative:
                found.append({
                    "task_id": task_id, "prompt_share": round(profile.prompt_share, 3),
                    "reason": f"{profile.prompt_share:.0%} of the canonical's body repeats "
                              "the prompt's own code"})  # fmt: skip
        return found

    def rule_summary(self) -> dict:
        """`evidence_rule`: thresholds, the chance rate over the report's tasks, references."""
        pooled = {t: c for t, c in self.chance.items() if t in self.seen_tasks}
        compared_total = sum(c for _, c in self.chance.values())
        hits_total = sum(h for h, _ in self.chance.values())
        chance = {
            "pairs": hits_total,
            "comparisons": compared_total,
            "rate": round(100 * hits_total / compared_total, 3) if compared_total else 0.0,
            "pool": max((c for _, c in pooled.values()), default=0),
            "generic_tasks": sorted(
                t for t, (h, c) in pooled.items() if c and h / c > self.rule.chance_max
            ),
        }
        panel = self.panel
        return {**self.rule.as_dict(), "chance": chance,
                "reference_solutions": sum(len(v) for v in self.references.values()),
                "convergence": {
                    **self.convergence_rule.as_dict(),
                    "panel": None if panel is None else {
                        "models": len(panel.models), "families": sorted(panel.families()),
                        "stale": panel.stale},
                    "panel_files": sum(len(v) for v in self.file_solvers.values()),
                    "families_named": self.families}}  # fmt: skip


def check_named_families(families: dict, store, panel_models: set[str]) -> None:
    """A `--family MODEL=FAMILY` whose model is neither in the store nor in a --panel file
    would change nothing (a misspelt name): refused, naming the models there are."""
    held = {row[0] for row in store.db.execute("SELECT DISTINCT model FROM samples")}
    unknown = sorted(set(families) - held - panel_models)
    if unknown:
        there = ", ".join(sorted(held | panel_models)[:8]) or "none"
        raise UserError(f"--family {unknown[0]}={families[unknown[0]]}: no model "
                        f"{unknown[0]!r} in {store.path} or the --panel files (models there: "
                        f"{there}); give the model's name as they spell it")  # fmt: skip


def panel_file_solvers(canonicals, settings, families: dict,
                       models: set[str] | None = None) -> dict[str, list[Solver]]:  # fmt: skip
    """Per task, the solvers of the sample files given with --panel (any format `import`
    reads), one per model of a file, measured like the shipped panel (their models are added
    to `models`)."""
    from ..benchmarks import load_prompt_set
    from ..generation.samplefiles import ImportDefaults, read_sample_file
    from .null_model import reference_features

    found: dict[str, list[Solver]] = defaultdict(list)
    for path in settings.panel_files or ():
        defaults = ImportDefaults(model=path.stem, temperature=0.0)
        samples = read_sample_file(path, canonicals.benchmark,
                                   lambda name: load_prompt_set(name, canonicals.benchmark),
                                   defaults)  # fmt: skip
        by_model: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for sample in samples:
            by_model[sample.model][sample.task_id].append(sample.program or "")
        if models is not None:
            models.update(by_model)
        for model, programs in by_model.items():
            for task_id, features in reference_features(canonicals, programs).items():
                closeness = tuple((f.verbatim, f.structure) for f in features if f.tokens > 0)
                found[task_id].append(Solver(f"{model} ({path.name})", family_of(model, families),
                                             "file", len(closeness), closeness))  # fmt: skip
    return dict(found)

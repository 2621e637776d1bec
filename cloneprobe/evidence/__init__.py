"""Evidence of memorization: what a clone verdict rests on that convergence, chance and the
prompt do not explain.

- `canonical_profile`: a canonical's own tokens, names, literals and comments, less the prompt;
  tasks whose canonical is mostly prompt code are uninformative;
- `strength`: the sample's answer function and what it keeps of the canonical;
- `null_model`: how often other solutions reach it (chance across tasks, other samples of the
  task, reference solutions);
- `tiers`: the rule (evidence or similar solution) and its reasons;
- `stream`: the view of a streamed audit (chance pool and references before, each verdict
  tiered as it arrives);
- `summary`: evidence rates with confidence intervals, original against fixed on evidence;
- `verdict`: one verdict per task (memorized, suspected, no evidence, uninformative) from the
  evidence tier and the likelihood signals, with the calibrated error rates
  (`verdict_calibration.json`);
- `calibrate/`: the scripts that set the thresholds (`python -m cloneprobe.evidence.calibrate.X`).
"""

"""The scripts that set the evidence and verdict thresholds, each runnable with `python -m`.

- `known_answers`: the evidence rule on constructed samples with a known answer (pasted,
  renamed and edited canonicals against hand-written alternatives and stubs), built by `corpus`;
- `control_evidence`: the evidence rule on a positive control's real samples;
- `verdict`: the verdict's likelihood margin and its error rates on a positive control
  (`--write` updates `cloneprobe/evidence/verdict_calibration.json`).
"""

"""The detection's version, apart from the detection itself so that the evidence modules that
key their figures and calibrations by it (panel figures, the verdict's calibration key) read it
without importing the detection, which imports them."""

DETECTOR = "cloneprobe.clones"
DETECTOR_VERSION = 5
"""Raised whenever a change to the detector can change a verdict (old verdicts are then
recomputed, not reused)."""

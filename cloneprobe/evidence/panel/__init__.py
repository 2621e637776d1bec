"""The shipped panel of independent solvers, as figures: per HumanEval task and panel model,
the evidence features (cloneprobe.evidence.strength) of each sample's answer against the
canonical, derived from publicly published sample files of models of several unrelated
families. `sources.json` lists each source (repository, path, commit, licence, model, family);
`figures.json` holds the figures (no sample text); `python -m cloneprobe.evidence.panel.build`
rebuilds them from those files. `families` names a model's family (models of one family never
vouch for each other); `convergence` is the same-task null built from it.
"""

"""Generation: model backends, sampling plans and the sample store."""

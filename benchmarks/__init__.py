"""Benchmarks: tasks, prompt sets and canonical fragments (see issue: benchmarks/)."""

"""Benchmark: MIRAGE runs, their results and honest statistics."""

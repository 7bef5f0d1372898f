"""Annotate: blind pooled relevance judging, agreement and per-method metrics."""

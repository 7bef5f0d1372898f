"""Workshops: the recorded pack of teaching cases, replay step by step, what-if re-runs."""

"""Asking, running and showing one run: the question form, live panels and every job's trace views."""

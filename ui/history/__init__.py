"""History: saved runs, comparisons, what is running, run files."""

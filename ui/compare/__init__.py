"""Compare: several methods on one question."""

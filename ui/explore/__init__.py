"""Ask: one method on one question, live."""

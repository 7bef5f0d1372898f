"""Workshop: the recorded pack, replays, rooms, predictions and what-if re-runs."""

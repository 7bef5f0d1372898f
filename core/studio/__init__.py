"""The studio's features, built on the engine: benchmarks over MIRAGE files (``eval``), relevance labels
(``labels``), run files, live rooms, the workshop and teaching pack, serving a room and its access policy, model
prices, and the command line (``cli``). They import the engine and each other, never ``ui``."""

"""The engine: what runs a method and keeps its trace, with no studio feature in it. The trace contract, questions,
stages, settings and paths; the LLM client and backend profiles (``llm``), retrieval (``retrieval``), the methods
(``methods``), the store (``store``), jobs, and the runner that puts a run together. Nothing here imports
``core.studio``, ``ui`` or ``benchmarks`` (``tests/test_layers.py``)."""

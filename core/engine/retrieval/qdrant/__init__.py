"""Qdrant as a search backend: one collection of snippets with named dense and sparse BM25 vectors.

``layout`` (points and ids), ``sparse`` (BM25 as sparse vectors), ``stats`` (each corpus's record and document
frequencies), ``store`` (the collection through ``qdrant-client``: a server, a cluster or the local mode), ``edge``
(the collection in Qdrant's engine in-process), ``ingest`` (streamed, resumable), ``backend`` (the search backend).
"""

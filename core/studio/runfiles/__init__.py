"""Run files: saved runs exported to one portable ``.json.gz`` and imported on another machine.

``export_to(store, ids, path)`` writes one; ``import_file(store, path)`` checks a whole file and imports it in one
transaction; ``read(path)`` opens one without importing it (replay straight from a file).
"""

from core.studio.runfiles.exchange import ImportReport, export_runs, export_to, import_file, import_runs
from core.studio.runfiles.format import FORMAT, VERSION, CorpusRef, Origin, RunEntry, RunFile, RunFileError, Variation
from core.studio.runfiles.io import dumps, read, write

__all__ = [
    "FORMAT",
    "VERSION",
    "CorpusRef",
    "ImportReport",
    "Origin",
    "RunEntry",
    "RunFile",
    "RunFileError",
    "Variation",
    "dumps",
    "export_runs",
    "export_to",
    "import_file",
    "import_runs",
    "read",
    "write",
]

"""Annotator names on a shared studio: the client (a computer's address, or one browser session) that first labels
under a name holds it, so nobody else can label under it, and a reload on the same computer keeps it. Names with
labels from before any claim are the owner's to take."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from core.engine import paths
from core.engine.store.sqlite import connect, transaction
from core.studio.labels.grades import LabelError, check_annotator


def _hash(holder: str) -> str:
    return hashlib.sha256(holder.encode()).hexdigest()


def name_key(name: str) -> str:
    """Names that differ only in case or spacing are one name ("Dr A. Rahman" and "dr a.  rahman")."""
    return " ".join(name.split()).casefold()


class NameClaims:
    def __init__(self, path: Path | str | None = None):
        self.path = Path(path or paths.db_path())
        connect(self.path).close()  # brought up to date once, here

    def take(self, name: str, holder: str, *, owner: bool = False) -> str:
        """``name`` (checked as an annotator name) for ``holder``, who keeps it from then on. Refused when another
        holder has it, or when labels under it exist from before and the one asking is not the owner."""
        name = check_annotator(name)
        conn = connect(self.path)
        try:
            with transaction(conn):
                held = conn.execute(
                    "SELECT name, holder_hash FROM annotator_claims WHERE name_key = ?", [name_key(name)]
                ).fetchone()
                if held and held[1] == _hash(holder):
                    return held[0]
                if held:
                    raise LabelError(
                        f"Someone else labels as “{held[0]}” on this studio; choose another name (add an initial, say)."
                    )
                before = conn.execute("SELECT DISTINCT annotator FROM labels").fetchall()
                if not owner and any(name_key(row[0]) == name_key(name) for row in before):
                    raise LabelError(
                        f"Labels under “{name}” exist from before; choose another name, or ask the studio's owner."
                    )
                conn.execute(
                    "INSERT INTO annotator_claims (name_key, name, holder_hash, claimed) VALUES (?, ?, ?, ?)",
                    [name_key(name), name, _hash(holder), time.time()],
                )
        finally:
            conn.close()
        return name

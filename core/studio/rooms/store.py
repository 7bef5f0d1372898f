"""Rooms of a live workshop, kept in the studio's SQLite file so every browser session of one server (and any
other process) sees the same state: the presenter's current step, the members, their predictions and votes.

Codes are short and use only characters that cannot be misread (no 0/O, 1/I/L). The presenter and each member
hold a random token (kept only as a hash); a page that reloads with its token in the URL is the same member
again. Writes take the write lock up front (BEGIN IMMEDIATE) and wait for it (busy timeout), so many sessions
voting at once queue instead of failing.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.engine import paths
from core.engine.store.sqlite import connect, transaction

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
MAX_NAME = 40


class RoomError(ValueError):
    """A room action that cannot happen; the message says why in the user's words."""


@dataclass(frozen=True)
class Room:
    code: str
    title: str
    source: str  # where its runs are read from: a workshop pack file name, or "store"
    run_ids: tuple[str, ...]
    case_id: str | None
    step: int
    steps: int  # the last step (steps - 1) is the reveal
    created: float
    updated: float

    @property
    def revealed(self) -> bool:
        return self.step >= self.steps - 1


@dataclass(frozen=True)
class Member:
    id: int
    room_code: str
    name: str
    joined: float


@dataclass
class Tally:
    members: int
    # run id -> option -> members whose latest pick for that run's answer it is
    predictions: dict[str, dict[str, int]] = field(default_factory=dict)
    predicted: int = 0  # members who picked an option for at least one run
    changed_mind: int = 0  # members whose pick for a run changed as the steps went on
    trust: dict[str, tuple[int, int]] = field(default_factory=dict)  # snippet id -> (trusted, distrusted)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def normalise_code(text: str) -> str:
    code = "".join(text.split()).replace("-", "").upper()
    if len(code) != CODE_LENGTH or any(c not in ALPHABET for c in code):
        raise RoomError(
            f"a room code is {CODE_LENGTH} letters and digits (never 0, O, 1, I or L), "
            f"like K7PX3M; {text.strip()!r} is not one"
        )
    return code


class RoomStore:
    """Thread-safe: one connection, one lock; several processes can hold one each on the same file."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path or paths.db_path())
        self._conn = connect(self.path)
        self._lock = threading.RLock()
        self._steps: dict[str, tuple[float, int]] = {}  # room code -> (when last read, its step), see ``step``

    # -- transactions -----------------------------------------------------------------------------
    def _write(self, fn, *args: Any) -> Any:
        """``fn(conn, *args)`` inside one write transaction that waits for the lock rather than failing."""
        with self._lock, transaction(self._conn) as conn:
            return fn(conn, *args)

    def _rows(self, sql: str, args: list[Any]) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._conn.execute(sql, args)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]

    # -- rooms ------------------------------------------------------------------------------------
    def open_room(
        self, *, title: str, source: str, run_ids: list[str], steps: int, case_id: str | None = None
    ) -> tuple[Room, str]:
        """A new room at step 0 and the presenter's token (the only way to drive it)."""
        if steps < 2:
            raise RoomError("a room needs at least two steps: one to predict on and the reveal")
        if not run_ids:
            raise RoomError("a room needs at least one run to replay")
        token = secrets.token_urlsafe(18)

        def insert(conn: sqlite3.Connection) -> str:
            for _ in range(20):
                code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
                if not conn.execute("SELECT 1 FROM rooms WHERE code = ?", [code]).fetchone():
                    break
            else:
                raise RoomError("no free room code was found; try again")
            now = time.time()
            conn.execute(
                "INSERT INTO rooms (code, title, presenter_hash, source, run_ids, case_id, step, steps, "
                "created, updated) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
                [code, title, _hash(token), source, json.dumps(run_ids), case_id, steps, now, now],
            )
            return code

        code = self._write(insert)
        return self.room(code), token

    def room(self, code: str) -> Room:
        code = normalise_code(code)
        rows = self._rows("SELECT * FROM rooms WHERE code = ?", [code])
        if not rows:
            raise RoomError(f"no room has the code {code}; check it with the presenter")
        row = rows[0]
        with self._lock:
            self._steps[row["code"]] = (time.monotonic(), row["step"])  # the freshest step any screen has read
        return Room(
            code=row["code"],
            title=row["title"],
            source=row["source"],
            run_ids=tuple(json.loads(row["run_ids"])),
            case_id=row["case_id"],
            step=row["step"],
            steps=row["steps"],
            created=row["created"],
            updated=row["updated"],
        )

    def step(self, code: str, within: float) -> int:
        """The room's step as read at most ``within`` seconds ago: every screen following a room asks each second,
        and they share one read (a presenter in another process is seen at most ``within`` seconds late)."""
        code = normalise_code(code)
        with self._lock:
            read, step = self._steps.get(code, (float("-inf"), 0))
            return step if time.monotonic() - read < within else self.room(code).step

    def is_presenter(self, code: str, token: str) -> bool:
        rows = self._rows("SELECT presenter_hash FROM rooms WHERE code = ?", [normalise_code(code)])
        return bool(rows) and secrets.compare_digest(rows[0]["presenter_hash"], _hash(token))

    def take_over(self, code: str) -> str:
        """A new presenter's token for the room (the old one stops working): the studio's owner resumes presenting
        from another browser or after a reload. The caller checks that the one asking is the owner."""
        room = self.room(code)
        token = secrets.token_urlsafe(18)
        self._write(
            lambda conn: conn.execute(
                "UPDATE rooms SET presenter_hash = ?, updated = ? WHERE code = ?",
                [_hash(token), time.time(), room.code],
            )
        )
        return token

    def recent(self, limit: int = 10) -> list[Room]:
        """The rooms changed most recently, newest first."""
        codes = self._rows("SELECT code FROM rooms ORDER BY updated DESC LIMIT ?", [limit])
        return [self.room(r["code"]) for r in codes]

    def set_step(self, code: str, token: str, step: int) -> Room:
        """The presenter moves the room to ``step`` (kept within the room's steps); everyone follows."""
        room = self.room(code)
        if not self.is_presenter(room.code, token):
            raise RoomError("only the presenter of this room can change its step")
        step = max(0, min(step, room.steps - 1))
        self._write(
            lambda conn: conn.execute(
                "UPDATE rooms SET step = ?, updated = ? WHERE code = ?", [step, time.time(), room.code]
            )
        )
        return self.room(room.code)  # read back: this store's screens see the move at once

    # -- members ----------------------------------------------------------------------------------
    def join(self, code: str, name: str) -> tuple[Member, str]:
        name = " ".join(name.split())[:MAX_NAME]
        if not name:
            raise RoomError("type a name first, so the presenter can tell participants apart")
        room = self.room(code)
        token = secrets.token_urlsafe(18)
        now = time.time()
        member_id = self._write(
            lambda conn: conn.execute(
                "INSERT INTO room_members (room_code, name, token_hash, joined, last_seen) VALUES (?, ?, ?, ?, ?)",
                [room.code, name, _hash(token), now, now],
            ).lastrowid
        )
        return Member(id=member_id, room_code=room.code, name=name, joined=now), token

    def member(self, code: str, token: str) -> Member | None:
        """The member holding ``token`` in that room (a reload rejoins), or None."""
        rows = self._rows(
            "SELECT id, room_code, name, joined FROM room_members WHERE token_hash = ? AND room_code = ?",
            [_hash(token), normalise_code(code)],
        )
        return Member(**rows[0]) if rows else None

    def members(self, code: str) -> list[Member]:
        rows = self._rows(
            "SELECT id, room_code, name, joined FROM room_members WHERE room_code = ? ORDER BY id",
            [normalise_code(code)],
        )
        return [Member(**r) for r in rows]

    # -- votes ------------------------------------------------------------------------------------
    def _open_for_votes(self, code: str) -> Room:
        room = self.room(code)
        if room.revealed:
            raise RoomError("the answer has been revealed, so votes are closed")
        return room

    def predict(self, code: str, member_id: int, run_id: str, option: str) -> None:
        """The member's pick of the option ``run_id``'s method will choose, at the room's current step (a later
        pick at the same step replaces it)."""
        room = self._open_for_votes(code)
        if run_id not in room.run_ids:
            raise RoomError(f"run {run_id} is not replayed in room {room.code}")
        self._write(
            lambda conn: conn.execute(
                "INSERT INTO room_predictions (room_code, member_id, run_id, step, option, time) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (room_code, member_id, run_id, step) DO UPDATE SET option = excluded.option, "
                "time = excluded.time",
                [room.code, member_id, run_id, room.step, option, time.time()],
            )
        )

    def trust(self, code: str, member_id: int, snippet_id: str, trusted: bool | None) -> None:
        """Would the member trust this snippet? ``None`` takes the vote back."""
        room = self._open_for_votes(code)
        if trusted is None:
            sql, args = (
                "DELETE FROM room_trust WHERE room_code = ? AND member_id = ? AND snippet_id = ?",
                [room.code, member_id, snippet_id],
            )
        else:
            sql = (
                "INSERT INTO room_trust (room_code, member_id, snippet_id, trust, step, time) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (room_code, member_id, snippet_id) DO UPDATE SET "
                "trust = excluded.trust, step = excluded.step, time = excluded.time"
            )
            args = [room.code, member_id, snippet_id, int(trusted), room.step, time.time()]
        self._write(lambda conn: conn.execute(sql, args))

    def my_votes(self, code: str, member_id: int) -> tuple[dict[str, str], dict[str, bool]]:
        """The member's latest pick per run and their trust votes (what their screen shows after a reload)."""
        code = normalise_code(code)
        picks = self._rows(
            "SELECT run_id, option FROM room_predictions WHERE room_code = ? AND member_id = ? ORDER BY step",
            [code, member_id],
        )
        trust = self._rows(
            "SELECT snippet_id, trust FROM room_trust WHERE room_code = ? AND member_id = ?", [code, member_id]
        )
        return {r["run_id"]: r["option"] for r in picks}, {r["snippet_id"]: bool(r["trust"]) for r in trust}

    def tally(self, code: str) -> Tally:
        code = normalise_code(code)
        members = self._rows("SELECT COUNT(*) AS n FROM room_members WHERE room_code = ?", [code])[0]["n"]
        picks = self._rows(
            "SELECT member_id, run_id, option FROM room_predictions WHERE room_code = ? ORDER BY step", [code]
        )
        history: dict[tuple[int, str], list[str]] = {}
        for row in picks:
            history.setdefault((row["member_id"], row["run_id"]), []).append(row["option"])
        latest: dict[str, Counter] = {}
        for (_, run_id), options in history.items():
            latest.setdefault(run_id, Counter())[options[-1]] += 1
        votes = self._rows(
            "SELECT snippet_id, SUM(trust) AS yes, SUM(1 - trust) AS no FROM room_trust "
            "WHERE room_code = ? GROUP BY snippet_id",
            [code],
        )
        return Tally(
            members=members,
            predictions={r: dict(sorted(c.items())) for r, c in latest.items()},
            predicted=len({member for member, _ in history}),
            changed_mind=len({member for (member, _), o in history.items() if len(set(o)) > 1}),
            trust={r["snippet_id"]: (r["yes"], r["no"]) for r in votes},
        )

"""Workshop rooms on a real SQLite file: codes, the presenter's step, rejoining, and votes written at once by
many threads and several processes with nothing lost and no "database is locked"."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading

import pytest

from core.engine.store import RunStore
from core.studio.rooms import ALPHABET, RoomError, RoomStore, normalise_code


@pytest.fixture
def rooms(tmp_path):
    return RoomStore(tmp_path / "studio.sqlite")


def new_room(rooms: RoomStore, steps: int = 5):
    return rooms.open_room(title="Asthma", source="asthma.json.gz", run_ids=["r1", "r2"], steps=steps, case_id="asthma")


def test_a_room_has_a_short_unambiguous_code_and_starts_at_step_0(rooms):
    codes = {new_room(rooms)[0].code for _ in range(50)}
    assert len(codes) == 50
    for code in codes:
        assert len(code) == 6 and set(code) <= set(ALPHABET) and not set(code) & set("0O1IL")
    room, _ = new_room(rooms)
    assert room.step == 0 and room.run_ids == ("r1", "r2") and not room.revealed
    assert rooms.room(f" {room.code[:3].lower()}-{room.code[3:].lower()} ").code == room.code  # typed loosely


def test_the_screens_following_a_room_share_one_read_of_its_step(rooms, tmp_path):
    room, token = new_room(rooms)
    presenter_elsewhere = RoomStore(tmp_path / "studio.sqlite")  # another process's store on the same file
    assert rooms.step(room.code, within=3600) == 0
    presenter_elsewhere.set_step(room.code, token, 2)
    assert rooms.step(room.code, within=3600) == 0  # read a moment ago: the screens are told the step they had
    assert rooms.step(room.code, within=0) == 2  # read again once ``within`` has passed
    rooms.set_step(room.code, token, 3)
    assert rooms.step(room.code, within=3600) == 3  # a move through this store is seen at once
    presenter_elsewhere.set_step(room.code, token, 4)
    assert rooms.room(room.code).step == 4  # a page drawn afresh reads the row…
    assert rooms.step(room.code, within=3600) == 4  # …and the polls after it are told that step, never an older one
    with pytest.raises(RoomError, match="no room has the code ABCDEF"):
        rooms.step("ABCDEF", within=0)


def test_codes_that_cannot_exist_or_do_not_exist_are_named(rooms):
    with pytest.raises(RoomError, match="never 0, O, 1, I or L"):
        normalise_code("AB0CDE")
    with pytest.raises(RoomError, match="no room has the code ABCDEF"):
        rooms.room("abcdef")


def test_only_the_presenter_moves_the_room_and_steps_stay_in_range(rooms):
    room, token = new_room(rooms, steps=5)
    assert rooms.set_step(room.code, token, 3).step == 3
    with pytest.raises(RoomError, match="only the presenter"):
        rooms.set_step(room.code, "someone-else", 1)
    assert rooms.set_step(room.code, token, 99).step == 4 and rooms.room(room.code).revealed
    assert rooms.set_step(room.code, token, -2).step == 0


def test_a_member_who_reloads_rejoins_with_their_votes(tmp_path):
    path = tmp_path / "studio.sqlite"
    rooms = RoomStore(path)
    room, presenter = new_room(rooms)
    member, token = rooms.join(room.code, "  Dr   Ada ")
    rooms.predict(room.code, member.id, "r1", "B")
    rooms.trust(room.code, member.id, "tp-asthma-o1", False)
    again = RoomStore(path)  # another process, after the reload
    assert again.member(room.code, token) == member and member.name == "Dr Ada"
    assert again.member(room.code, "forged") is None
    assert again.my_votes(room.code, member.id) == ({"r1": "B"}, {"tp-asthma-o1": False})
    with pytest.raises(RoomError, match="type a name"):
        rooms.join(room.code, "   ")


def test_tally_counts_latest_picks_and_trust_and_votes_close_at_the_reveal(rooms):
    room, presenter = new_room(rooms, steps=4)
    ids = [rooms.join(room.code, f"p{i}")[0].id for i in range(4)]
    rooms.predict(room.code, ids[0], "r1", "A")
    rooms.predict(room.code, ids[1], "r1", "A")
    rooms.predict(room.code, ids[2], "r1", "C")
    rooms.predict(room.code, ids[2], "r2", "D")
    rooms.trust(room.code, ids[0], "s1", True)
    rooms.trust(room.code, ids[1], "s1", False)
    rooms.trust(room.code, ids[2], "s1", True)
    rooms.set_step(room.code, presenter, 2)
    rooms.predict(room.code, ids[0], "r1", "B")  # changed their mind at a later step
    with pytest.raises(RoomError, match="run r9 is not replayed in room"):
        rooms.predict(room.code, ids[0], "r9", "B")
    rooms.trust(room.code, ids[2], "s1", None)  # took the vote back
    tally = rooms.tally(room.code)
    assert tally.members == 4 and tally.predicted == 3 and tally.changed_mind == 1
    assert tally.predictions == {"r1": {"A": 1, "B": 1, "C": 1}, "r2": {"D": 1}} and tally.trust == {"s1": (1, 1)}
    rooms.set_step(room.code, presenter, 3)
    with pytest.raises(RoomError, match="revealed, so votes are closed"):
        rooms.predict(room.code, ids[3], "r1", "D")


def test_the_room_tables_come_with_the_run_store(tmp_path):
    store = RunStore(tmp_path / "studio.sqlite")
    assert {"rooms", "room_members", "room_predictions", "room_trust", "run_provenance"} <= set(store.db.table_names())


# -- many writers at once ------------------------------------------------------------------------------------

VOTES_EACH = 40


def _vote_in_process(path: str, code: str, first: int, count: int, errors) -> None:
    try:
        rooms = RoomStore(path)
        for i in range(first, first + count):
            member, _ = rooms.join(code, f"proc-{i}")
            for n in range(VOTES_EACH):
                rooms.predict(code, member.id, "r1", "ABCD"[n % 4])
                rooms.trust(code, member.id, f"s{n % 10}", n % 3 != 0)
    except Exception as exc:  # reported to the parent, which fails the test with it
        errors.put(f"{type(exc).__name__}: {exc}")


def test_threads_and_processes_voting_at_once_lose_nothing(tmp_path):
    path = tmp_path / "studio.sqlite"
    rooms = RoomStore(path)
    room, _ = new_room(rooms)
    ctx = multiprocessing.get_context("spawn")
    errors = ctx.Queue()
    processes = [
        ctx.Process(target=_vote_in_process, args=(str(path), room.code, 100 + 3 * p, 3, errors)) for p in range(4)
    ]
    for p in processes:
        p.start()
    thread_errors: list[str] = []

    def in_thread(i: int) -> None:
        try:
            member, _ = rooms.join(room.code, f"thread-{i}")
            for n in range(VOTES_EACH):
                rooms.predict(room.code, member.id, "r2", "ABCD"[(n + i) % 4])
                rooms.trust(room.code, member.id, f"s{n % 10}", n % 2 == 0)
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            thread_errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=in_thread, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in processes:
        p.join(timeout=120)
    reported = []
    while not errors.empty():
        reported.append(errors.get())
    assert thread_errors == [] and reported == [] and all(p.exitcode == 0 for p in processes)
    tally = rooms.tally(room.code)
    assert tally.members == 30 + 12 and tally.predicted == 42
    assert sum(tally.predictions["r1"].values()) == 12 and sum(tally.predictions["r2"].values()) == 30
    assert sum(yes + no for yes, no in tally.trust.values()) == 42 * 10  # one vote per member and snippet
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM room_predictions").fetchone()[0] == 42  # one row per member and step
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

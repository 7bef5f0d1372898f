"""Live workshop rooms: a presenter's step that every participant's screen follows, and their votes."""

from core.studio.rooms.store import ALPHABET, CODE_LENGTH, Member, Room, RoomError, RoomStore, Tally, normalise_code

__all__ = ["ALPHABET", "CODE_LENGTH", "Member", "Room", "RoomError", "RoomStore", "Tally", "normalise_code"]

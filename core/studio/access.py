"""Who may do what in the studio: the policy every page asks before it offers an action and again when the action
happens.

Two modes, one switch, the address the server listens on. On loopback (``make run``) only this computer can open
the studio: one trusted user, who may do everything. On any other address (``make serve``, a LAN address, all
interfaces) it is shared: the owner signs in (a passcode, or an OpenID login on the owner allow-list) and may do
everything; everyone else is a visitor, who may follow rooms, replay, and label under their own name, and run methods
on the embedded model only when the owner allows it, a few runs at a time.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path

from core.engine.settings import Settings
from core.engine.store.settings import read_setting, write_setting

MAX_LIVE_RUNS_EACH = 3
ALLOWANCES = "visitor allowances"


class Mode(StrEnum):
    SINGLE = "single"  # served on loopback: one trusted user
    SHARED = "shared"  # served to other machines: an owner and visitors


class Role(StrEnum):
    OWNER = "owner"
    VISITOR = "visitor"


class Action(StrEnum):
    """What a page can do, in the words a refusal uses ("only the owner can ...")."""

    JOIN_ROOM = "join a live room"
    REPLAY = "replay recorded runs at their own pace"
    LABEL = "label snippets under their own name"
    IMPORT_OWN_LABELS = "import their own labels"
    LIVE_RUN = "run methods live on the embedded model (Ask, Compare, What if)"
    USE_ENDPOINT = "run methods on the configured endpoint"
    PRESENT = "open and present a live room"
    SETTINGS = "change the settings"
    BENCHMARK = "run benchmarks"
    BUILD_INDEX = "build corpus indexes"
    MANAGE_RUNS = "delete or export anyone's runs"
    IMPORT_RUNS = "import run files"
    ADJUDICATE = "see every annotator's labels and adjudicate"
    EXPORT_LABELS = "export everyone's labels"
    REPLACE_LABELS = "import labels under the names in a file"
    ALLOW = "decide what visitors may do"


VISITOR_ALWAYS = frozenset({Action.JOIN_ROOM, Action.REPLAY, Action.LABEL, Action.IMPORT_OWN_LABELS})


class Forbidden(PermissionError):
    """An action this session may not take; the message says so in the user's words."""


@dataclass(frozen=True)
class Allowances:
    """What the owner lets visitors do beyond the always-allowed: live runs, and how many each may have going."""

    live_runs: bool = False
    live_runs_each: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.live_runs_each <= MAX_LIVE_RUNS_EACH:
            raise ValueError(f"live runs per visitor must be 1 to {MAX_LIVE_RUNS_EACH}, not {self.live_runs_each}")


@dataclass(frozen=True)
class Access:
    mode: Mode
    role: Role
    allowances: Allowances = Allowances()

    @property
    def owner(self) -> bool:
        return self.role is Role.OWNER

    def may(self, action: Action) -> bool:
        if self.owner or action in VISITOR_ALWAYS:
            return True
        return action is Action.LIVE_RUN and self.allowances.live_runs

    def refusal(self, action: Action) -> str | None:
        """Why this session may not take ``action``, in words; None when it may."""
        if self.may(action):
            return None
        if action is Action.LIVE_RUN:
            return "The owner has not opened live runs to visitors on this studio; recorded runs replay as usual."
        return f"Only the studio's owner can {action.value}."

    def require(self, action: Action) -> None:
        if problem := self.refusal(action):
            raise Forbidden(problem)

    def live_run_refusal(self, going: int, more: int) -> str | None:
        """Why ``more`` live runs may not start while this visitor has ``going`` (None when they may)."""
        if problem := self.refusal(Action.LIVE_RUN):
            return problem
        limit = self.allowances.live_runs_each
        if self.owner or going + more <= limit:
            return None
        have = f"; {going} of yours {'is' if going == 1 else 'are'} still going" if going else ""
        return (
            f"A visitor may have {limit} live run{'s' if limit != 1 else ''} going at once on this studio "
            f"(this needs {more}{have}). Wait for a run to end, or stop one."
        )

    def allowed(self) -> list[Action]:
        return [a for a in Action if self.may(a)]


# -- the switch -------------------------------------------------------------------------------------------------


def is_loopback(address: str | None) -> bool:
    """Whether a server bound to ``address`` is reachable only from this computer (no address: every interface)."""
    if not address:
        return False
    if address.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip().strip("[]")).is_loopback
    except ValueError:  # a host name: it resolves to something reachable from elsewhere
        return False


def serving_mode(bind_address: str | None, settings: Settings) -> Mode:
    """Loopback is single-user; any other bind address is shared. ``MEDRAG_MODE=shared`` makes a loopback server
    shared too (behind a reverse proxy); nothing makes a server on another address single-user."""
    return Mode.SINGLE if settings.mode == "auto" and is_loopback(bind_address) else Mode.SHARED


# -- the owner's sign-in ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OwnerSignIn:
    """How the owner proves who they are: a passcode, and/or the emails of an OpenID login (``st.login``)."""

    passcode: str | None = field(default=None, repr=False)
    emails: frozenset[str] = frozenset()

    @classmethod
    def from_settings(cls, settings: Settings) -> OwnerSignIn:
        """The owner's sign-in as configured (a passcode too short is refused when the settings are read)."""
        return cls(settings.secret("MEDRAG_OWNER_PASSCODE") or None, settings.owner_emails)

    @property
    def configured(self) -> bool:
        return bool(self.passcode or self.emails)

    def passcode_matches(self, typed: str) -> bool:
        return self.passcode is not None and hmac.compare_digest(typed.strip().encode(), self.passcode.encode())

    def email_is_owner(self, email: str | None) -> bool:
        return bool(email) and email.strip().lower() in self.emails


# -- the owner's allowances, kept in the studio database (every session and process sees the same) -------------


def load_allowances(db_path: Path | str) -> Allowances:
    raw = read_setting(db_path, ALLOWANCES)
    if raw is None:
        return Allowances()
    try:
        return Allowances(**json.loads(raw))
    except (TypeError, ValueError):  # written by another version: the safe default
        return Allowances()


def save_allowances(db_path: Path | str, allowances: Allowances, access: Access) -> None:
    access.require(Action.ALLOW)
    write_setting(db_path, ALLOWANCES, json.dumps(asdict(allowances)))

"""The session's side of the access policy (``core/studio/access.py``): the mode, from the address this server listens on;
the owner's sign-in; the sidebar lines that say who you are and what you may do; and the check a page makes where
an action happens (a button only hidden is no protection: the check runs again in the callback)."""

from __future__ import annotations

import secrets

import streamlit as st

from core.engine import paths
from core.engine.settings import Settings
from core.studio.access import (
    MAX_LIVE_RUNS_EACH,
    Access,
    Action,
    Allowances,
    Forbidden,
    Mode,
    OwnerSignIn,
    Role,
    load_allowances,
    save_allowances,
    serving_mode,
)
from core.studio.throttle import Throttle
from ui.common import keys
from ui.common.state import settings

PASSCODE_TRIES, PASSCODE_WINDOW = 5, 300.0


@st.cache_resource(show_spinner=False)
def passcode_throttle() -> Throttle:
    return Throttle(PASSCODE_TRIES, PASSCODE_WINDOW)


def mode(read: Settings | None = None) -> Mode:
    return serving_mode(st.get_option("server.address"), read or settings())


def _login_email() -> str | None:
    try:
        if not st.user.get("is_logged_in"):
            return None
    except Exception:  # noqa: BLE001 - no [auth] section in secrets.toml (no OpenID login), or no script context
        return None
    return str(st.user.get("email") or "") or None


def current() -> Access:
    """This session's access, read afresh on every run (the owner can change the allowances at any moment)."""
    read = settings()  # once: every page of every visitor runs this
    now = mode(read)
    if now is Mode.SINGLE:
        return Access(now, Role.OWNER)
    owner = bool(st.session_state.get(keys.OWNER_SIGNED_IN)) or OwnerSignIn.from_settings(read).email_is_owner(
        _login_email()
    )
    return Access(now, Role.OWNER if owner else Role.VISITOR, load_allowances(paths.db_path()))


def client_key() -> str:
    """Who a guess or a live run comes from: the client's address (every tab of one computer together). Streamlit
    gives no address for a client on this computer itself (nor behind a proxy on it): then the browser session."""
    address = st.context.ip_address
    return address if isinstance(address, str) and address else f"session {session_id()}"


def session_id() -> str:
    return st.session_state.setdefault(keys.BROWSER_SESSION, secrets.token_urlsafe(12))


def started(run_ids: list[str]) -> None:
    """Runs this browser session started: a visitor may delete or download their own."""
    st.session_state.setdefault(keys.MY_RUNS, set()).update(run_ids)


def mine(run_id: str) -> bool:
    return run_id in st.session_state.get(keys.MY_RUNS, set())


def may_manage(run_id: str, *, say: bool = True) -> bool:
    """Whether this session may delete or download a run: the owner any, a visitor the runs they started here."""
    if current().may(Action.MANAGE_RUNS) or mine(run_id):
        return True
    if say:
        st.error(
            f"Only the studio's owner can delete or export run {run_id}: it is not one you started.",
            icon=":material/lock:",
        )
    return False


def allowed(action: Action) -> bool:
    """At an action: whether this session may take it; if not, says why on the page."""
    try:
        current().require(action)
    except Forbidden as exc:
        st.error(str(exc), icon=":material/lock:")
        return False
    return True


def notice(action: Action) -> bool:
    """Where a page would offer an action: whether it may; if not, a short note in its place."""
    problem = current().refusal(action)
    if problem:
        st.caption(f":material/lock: {problem}")
    return problem is None


# -- signing in -------------------------------------------------------------------------------------------------


def _sign_in() -> None:
    typed = st.session_state.pop(keys.PASSCODE, "")
    throttle, key = passcode_throttle(), client_key()
    if (wait := throttle.take(key)) > 0:
        st.session_state[keys.ACCESS_PROBLEM] = (
            f"Too many wrong passcodes from this computer; try again in {wait:.0f} s."
        )
        return
    if OwnerSignIn.from_settings(settings()).passcode_matches(typed):
        throttle.give_back(key)
        st.session_state[keys.OWNER_SIGNED_IN] = True
        st.session_state.pop(keys.ACCESS_PROBLEM, None)
        return
    st.session_state[keys.ACCESS_PROBLEM] = "That is not the owner's passcode."


def _sign_out() -> None:
    st.session_state.pop(keys.OWNER_SIGNED_IN, None)


def _sign_in_form(sign_in: OwnerSignIn) -> None:
    with st.popover("Sign in as the owner", icon=":material/key:", width="stretch"):
        if sign_in.passcode:
            with st.form("access.sign_in", border=False):
                st.text_input("Owner's passcode", type="password", key=keys.PASSCODE)
                st.form_submit_button("Sign in", type="primary", on_click=_sign_in)
        if sign_in.emails:
            st.button("Log in with your account", icon=":material/login:", key="access.login", on_click=st.login)
            if email := _login_email():
                st.caption(f"Logged in as {email}, which is not on the owner list.")
        if not sign_in.configured:
            st.caption(
                "No owner sign-in is set up: start the studio with `make serve`, or set "
                "MEDRAG_OWNER_PASSCODE (or MEDRAG_OWNER_EMAILS with an [auth] login) in .streamlit/secrets.toml."
            )
    if problem := st.session_state.get(keys.ACCESS_PROBLEM):
        st.error(problem)


# -- the sidebar ------------------------------------------------------------------------------------------------

VISITOR_WORDS = {
    Action.JOIN_ROOM: "join a live room",
    Action.REPLAY: "replay recorded runs at your own pace",
    Action.LABEL: "label snippets under your own name, and import your own labels",
    Action.LIVE_RUN: "run methods live on the embedded model",
}


def _allowances(access: Access) -> None:
    with st.expander("What visitors may do", icon=":material/tune:"):
        live = st.toggle(
            "Live runs",
            value=access.allowances.live_runs,
            key="access.allow_live",
            help="Visitors run methods live (Ask, Compare, What if) on the embedded model, never on your endpoint",
        )
        each = st.number_input(
            "At once, each",
            1,
            MAX_LIVE_RUNS_EACH,
            access.allowances.live_runs_each,
            key="access.allow_each",
            disabled=not live,
            help="Live runs one visitor's computer may have going together",
        )
        wanted = Allowances(live_runs=live, live_runs_each=int(each))
        if wanted != access.allowances:
            save_allowances(paths.db_path(), wanted, current())
            st.toast("Saved: every visitor's next page shows it.")


def sidebar(access: Access) -> None:
    """Who you are and what you may do, in two lines; the owner's sign-in and allowances."""
    with st.sidebar:
        if access.mode is Mode.SINGLE:
            st.caption(
                ":material/computer: Only this computer can open this studio, so everything here is yours. "
                "`make serve` shares it with a room."
            )
            return
        if access.owner:
            how = f"logged in as {_login_email()}" if _login_email() else "signed in with the passcode"
            st.markdown(f":material/shield_person: **Owner** · {how}")
            st.caption("You may do everything: settings, benchmarks, index builds, run files, rooms and adjudication.")
            _allowances(access)
            if st.session_state.get(keys.OWNER_SIGNED_IN):
                st.button("Sign out", icon=":material/logout:", key="access.sign_out", on_click=_sign_out)
            return
        may = [VISITOR_WORDS[a] for a in VISITOR_WORDS if access.may(a)]
        runs = access.allowances.live_runs_each
        if access.may(Action.LIVE_RUN):
            may[-1] += f" ({runs} at a time)"
        st.markdown(":material/person: **Visitor**")
        st.caption("You may " + "; ".join(may) + ". Settings, benchmarks, run files and adjudication are the owner's.")
        _sign_in_form(OwnerSignIn.from_settings(settings()))

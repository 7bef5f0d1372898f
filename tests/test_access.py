"""The access policy in core: the switch between single-user and shared mode, what each role may do, the owner's
sign-in, guesses limited per client, the owner's allowances shared through the database, annotator names held by the
client that first used them, and ``make serve``'s plan."""

from __future__ import annotations

import threading

import pytest

from core.engine import paths
from core.engine.settings import ConfigError, settings
from core.studio.access import (
    Access,
    Action,
    Allowances,
    Forbidden,
    Mode,
    OwnerSignIn,
    Role,
    is_loopback,
    load_allowances,
    save_allowances,
    serving_mode,
)
from core.studio.cli.serve import banner, plan
from core.studio.labels import LabelError, LabelStore, QuestionRef
from core.studio.labels.claims import NameClaims
from core.studio.throttle import Throttle

OWNER = Access(Mode.SHARED, Role.OWNER)
VISITOR = Access(Mode.SHARED, Role.VISITOR)


@pytest.mark.parametrize(
    "address, mode",
    [
        ("127.0.0.1", Mode.SINGLE),
        ("localhost", Mode.SINGLE),
        ("::1", Mode.SINGLE),
        ("127.0.0.2", Mode.SINGLE),
        (None, Mode.SHARED),
        ("", Mode.SHARED),
        ("0.0.0.0", Mode.SHARED),
        ("192.168.1.20", Mode.SHARED),
        ("::", Mode.SHARED),
        ("studio.lan", Mode.SHARED),
    ],
)
def test_loopback_is_single_user_and_any_other_address_is_shared(address, mode):
    assert serving_mode(address, settings()) is mode
    assert is_loopback(address) is (mode is Mode.SINGLE)


def test_shared_can_be_asked_for_on_loopback_but_nothing_makes_a_network_server_single_user():
    assert serving_mode("127.0.0.1", settings(MEDRAG_MODE="shared")) is Mode.SHARED
    assert serving_mode("0.0.0.0", settings(MEDRAG_MODE="auto")) is Mode.SHARED
    with pytest.raises(ConfigError, match="MEDRAG_MODE must be auto or shared, not 'single'"):
        settings(MEDRAG_MODE="single")


def test_a_visitor_may_follow_replay_and_label_and_nothing_of_the_owners():
    assert set(VISITOR.allowed()) == {Action.JOIN_ROOM, Action.REPLAY, Action.LABEL, Action.IMPORT_OWN_LABELS}
    assert set(OWNER.allowed()) == set(Action) and set(Access(Mode.SINGLE, Role.OWNER).allowed()) == set(Action)
    for action in (
        Action.SETTINGS,
        Action.BENCHMARK,
        Action.BUILD_INDEX,
        Action.MANAGE_RUNS,
        Action.IMPORT_RUNS,
        Action.ADJUDICATE,
        Action.EXPORT_LABELS,
        Action.REPLACE_LABELS,
        Action.PRESENT,
        Action.ALLOW,
        Action.USE_ENDPOINT,
    ):
        with pytest.raises(Forbidden, match=f"Only the studio's owner can {action.value}"):
            VISITOR.require(action)
    with pytest.raises(Forbidden, match="has not opened live runs to visitors"):
        VISITOR.require(Action.LIVE_RUN)


def test_live_runs_only_when_allowed_and_only_so_many_at_once_per_visitor():
    allowed = Access(Mode.SHARED, Role.VISITOR, Allowances(live_runs=True, live_runs_each=2))
    assert allowed.may(Action.LIVE_RUN) and not allowed.may(Action.USE_ENDPOINT)  # the embedded model only
    assert allowed.live_run_refusal(going=0, more=2) is None and allowed.live_run_refusal(going=1, more=1) is None
    assert "may have 2 live runs going at once on this studio (this needs 3)" in allowed.live_run_refusal(0, 3)
    assert "1 of yours is still going" in allowed.live_run_refusal(1, 2)
    assert "has not opened live runs" in VISITOR.live_run_refusal(0, 1)
    assert OWNER.live_run_refusal(going=9, more=3) is None
    with pytest.raises(ValueError, match="live runs per visitor must be 1 to 3"):
        Allowances(live_runs=True, live_runs_each=50)


def test_the_owners_allowances_are_kept_in_the_database_and_only_the_owner_changes_them():
    db = paths.db_path()
    assert load_allowances(db) == Allowances()  # a new studio: visitors run nothing live
    save_allowances(db, Allowances(live_runs=True, live_runs_each=3), OWNER)
    assert load_allowances(db) == Allowances(live_runs=True, live_runs_each=3)
    with pytest.raises(Forbidden, match="decide what visitors may do"):
        save_allowances(db, Allowances(), VISITOR)
    assert load_allowances(db).live_runs


def test_the_owners_passcode_and_email_list():
    sign_in = OwnerSignIn.from_settings(
        settings(MEDRAG_OWNER_PASSCODE=" correct-horse ", MEDRAG_OWNER_EMAILS="Ana@Example.org, b@example.org")
    )
    assert sign_in.passcode_matches("correct-horse") and not sign_in.passcode_matches("correct-hors")
    assert sign_in.email_is_owner("ana@example.org") and not sign_in.email_is_owner("eve@example.org")
    assert not sign_in.email_is_owner(None) and not OwnerSignIn().configured
    assert "correct-horse" not in repr(sign_in)
    with pytest.raises(ConfigError, match="MEDRAG_OWNER_PASSCODE must be at least 8 characters") as refused:
        settings(MEDRAG_OWNER_PASSCODE="1234")
    assert "1234" not in str(refused.value)


def test_guesses_are_limited_per_client_within_a_window():
    now = [1000.0]
    throttle = Throttle(attempts=3, window=60, clock=lambda: now[0])
    for _ in range(3):
        assert throttle.take("10.0.0.7") == 0  # each wrong guess stays counted
    assert throttle.take("10.0.0.7") == 60 and throttle.take("10.0.0.8") == 0  # another client is not held up
    now[0] += 30
    assert throttle.take("10.0.0.7") == 30
    now[0] += 31
    assert throttle.take("10.0.0.7") == 0
    throttle.give_back("10.0.0.7")  # a right guess is not counted
    assert [throttle.take("10.0.0.7") == 0 for _ in range(4)] == [True, True, True, False]


def test_guesses_sent_at_once_pass_the_limit_no_more_often_than_one_by_one():
    """Twenty threads guess at once, each holding its check open until every one has been let through or not: were
    the check and the count two steps, all twenty would pass before any was counted."""
    throttle = Throttle(attempts=5, window=300)
    asked, all_asked, checked = threading.Barrier(21), threading.Event(), []

    def guess() -> None:
        try:
            let_through = throttle.take("10.0.0.7") == 0
        finally:
            asked.wait()  # reached even when asking fails, so the test ends
        all_asked.wait()  # the passcode check, still going while the others ask
        checked.append(let_through)

    threads = [threading.Thread(target=guess) for _ in range(20)]
    for thread in threads:
        thread.start()
    asked.wait()
    all_asked.set()
    for thread in threads:
        thread.join()
    assert sorted(checked) == [False] * 15 + [True] * 5


def test_a_name_is_held_by_the_client_that_first_labelled_under_it():
    claims = NameClaims()
    assert claims.take("Dr A. Rahman", "10.0.0.5") == "Dr A. Rahman"
    assert claims.take("dr a.  rahman", "10.0.0.5") == "Dr A. Rahman"  # the same name, the same computer: kept
    with pytest.raises(LabelError, match="Someone else labels as “Dr A. Rahman”"):
        claims.take("DR A. RAHMAN", "10.0.0.6")
    LabelStore().set_label(QuestionRef("q/1", "h", "Q?"), "s1", "bob", 2)  # labelled before names were held
    with pytest.raises(LabelError, match="Labels under “Bob” exist from before"):
        claims.take("Bob", "10.0.0.6")
    assert claims.take("Bob", "10.0.0.9", owner=True) == "Bob"


def test_serve_makes_up_a_passcode_when_none_is_set_and_prints_the_join_address_with_a_qr_code():
    made = plan(8600, "0.0.0.0", "192.0.2.7", {"PATH": "/usr/bin"}, {})
    passcode = made.env["MEDRAG_OWNER_PASSCODE"]
    assert OwnerSignIn.from_settings(settings(**made.env)).passcode_matches(passcode)
    assert made.command[-4:] == ["--server.address", "0.0.0.0", "--server.port", "8600"]
    assert made.env["MEDRAG_JOIN_URL"] == "http://192.0.2.7:8600"
    shown = banner(made)
    assert "http://192.0.2.7:8600/workshop" in shown and passcode in shown and "█" in shown
    kept = plan(8600, "0.0.0.0", "192.0.2.7", {}, {"MEDRAG_OWNER_PASSCODE": "from-secrets-file"})
    assert "MEDRAG_OWNER_PASSCODE" not in kept.env and "as set in .streamlit/secrets.toml" in kept.passcode_note
    with pytest.raises(ConfigError, match="at least 8 characters"):
        plan(8600, "0.0.0.0", None, {"MEDRAG_OWNER_PASSCODE": "short"}, {})
    assert plan(8600, "::", "fd00::7", {}, {}).env["MEDRAG_JOIN_URL"] == "http://[fd00::7]:8600"  # a URL settings take


def _serve(argv: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    """``python -m core serve`` up to the point where the app would take the process over."""
    from core.__main__ import main

    def started(*args):
        raise AssertionError("the app was started")

    monkeypatch.setattr("core.studio.cli.serve.os.execve", started)
    try:
        code = main(["serve", *argv])
    except SystemExit as exc:  # argparse refuses an argument by exiting
        code = int(exc.code)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("port", ["99999", "0", "-1", "http"])
def test_serve_refuses_a_port_that_is_not_one_before_printing_anything(port, monkeypatch, capsys):
    code, out, err = _serve(["--port", port], monkeypatch, capsys)
    assert code == 2 and out == "" and "a port is a whole number from 1 to 65535" in err


def test_serve_says_when_it_cannot_listen_before_printing_a_passcode(monkeypatch, capsys):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = _serve(["--address", "127.0.0.1", "--port", str(port)], monkeypatch, capsys)
    assert code == 2 and out == "" and f"cannot listen on 127.0.0.1:{port}" in err

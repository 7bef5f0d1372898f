"""Calls made together wait for their shared prompt prefix to be read once (``core.engine.llm.fan_out``): who waits, what
the copying step is given, when calls run in turn instead, and that nothing it does can cost a call its answer or
hold a cancelled run."""

from __future__ import annotations

import threading
import time

import pytest

from core.engine.llm import fan_out
from core.engine.llm.cache import ResponseCache
from core.engine.llm.fan_out import FanOut, common_prefix
from core.engine.methods.contract import RunContext
from core.engine.methods.templates import messages
from core.engine.trace import Run
from tests.fakes import ScriptedLLM
from tests.waiting import patience, wait_until

SYSTEM = "You are one agent of a team."
SHARED = (
    "Documents:\n"
    + "".join(f"[d{i}] Finding {i}: aspirin is given early in STEMI, nitrates relieve pain.\n" for i in range(8))
    + "\nQuestion:\nWhich first?\n"
)


def view(role: str) -> list[dict[str, str]]:
    return messages(SYSTEM, SHARED, f"You are the {role}. Answer briefly.")


def test_the_common_prefix_is_whole_messages_then_the_shared_start_cut_at_a_line_break():
    prefix = common_prefix([view("Summarizer"), view("Extractor"), view("Reasoner")])
    assert prefix[0] == {"role": "system", "content": SYSTEM}
    assert prefix[1] == {"role": "user", "content": SHARED.rstrip() + "\n\n"}  # the roles differ after this
    assert common_prefix([view("A"), view("A")]) == view("A")
    other_system = [{"role": "system", "content": "Another team."}, view("A")[1]]
    assert common_prefix([view("A"), other_system]) == []  # differ in the first message, no line break shared


class Recorder:
    """A copying step that records when it ran and what it was given; it takes ``seconds`` (time for a member that
    did not wait to show it), or until ``release`` is set."""

    def __init__(self, seconds: float = 0.0, fail: bool = False, release: threading.Event | None = None):
        self.seconds, self.fail, self.release = seconds, fail, release
        self.copies: list[tuple[list, int]] = []
        self.done_at = 0.0

    def __call__(self, prefix, copies):
        self.copies.append((prefix, copies))
        time.sleep(self.seconds)
        if self.release is not None:
            assert self.release.wait(patience())
        self.done_at = time.monotonic()
        if self.fail:
            raise OSError("slot save refused")
        return copies


class Calls:
    """The model calls members make: when each started, and how many ran at once. ``together``: each call ends only
    once that many are in the model at the same moment (calls made in turn never meet, and fail)."""

    def __init__(self, seconds: float = 0.05, together: int = 1):
        self.seconds, self.started, self.active, self.most = seconds, [], 0, 0
        self.meeting = threading.Barrier(together, timeout=patience())
        self._lock = threading.Lock()

    def __call__(self, group: FanOut, messages, cancel=None) -> None:
        with group.call(messages, cancel):
            with self._lock:
                self.started.append(time.monotonic())
                self.active += 1
                self.most = max(self.most, self.active)
            try:
                self.meeting.wait()
                time.sleep(self.seconds)
            finally:
                with self._lock:
                    self.active -= 1


def members(group: FanOut, actions: list) -> None:
    """Runs each action (given the group as its thread's next call sees it) as a member in its own thread."""

    def member(i: int) -> None:
        group.run(lambda _: actions[i](fan_out.take()), None)

    threads = [threading.Thread(target=member, args=(i,)) for i in range(len(actions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in threads), "a member never got past the group"


ROLES = ("Summarizer", "Extractor", "Reasoner")


def test_members_wait_until_the_shared_prefix_is_copied_once_then_call_at_once():
    copy, calls = Recorder(seconds=0.3), Calls(together=3)
    members(FanOut(3, copy), [lambda g, r=r: calls(g, view(r)) for r in ROLES])
    assert copy.copies == [(common_prefix([view(r) for r in ROLES]), 3)]
    assert min(calls.started) >= copy.done_at, "a member went to the model before the prefix was shared"
    assert calls.most == 3


def test_members_answered_without_the_model_are_not_copied_for():
    copy, calls = Recorder(), Calls()
    members(FanOut(3, copy), [lambda g: calls(g, view("A")), lambda g: g.skip(), lambda g: calls(g, view("B"))])
    assert [n for _, n in copy.copies] == [2]

    alone = Recorder()  # one call left for the model: nothing to share
    members(FanOut(3, alone), [lambda g: g.skip(), lambda g: calls(g, view("A")), lambda g: None])
    assert alone.copies == []


def test_calls_sharing_little_run_in_turn_so_each_finds_what_the_one_before_read():
    docs = [messages(SYSTEM, f"Documents:\n{SHARED}\nQuery: {q}") for q in ("dose?", "timing?")]
    other = messages(SYSTEM, "Documents:\n[e1] Something else entirely.\nQuery: what?")
    mostly_own = [messages(SYSTEM, f"{SHARED}\n{q * 2000}") for q in "xyz"]  # shared, but a small part of each
    short = [messages(SYSTEM, f"Question: which {q}?\nAnswer as the {q} expert.") for q in ("drug", "test", "dose")]
    for group in ([*docs, other], mostly_own, short):
        copy, calls = Recorder(), Calls()
        members(FanOut(3, copy), [lambda g, m=m, c=calls: c(g, m) for m in group])
        assert copy.copies == [] and calls.most == 1 and len(calls.started) == 3


def test_a_member_that_fails_before_its_call_does_not_hold_the_others():
    prime = Recorder()

    def fails(_):
        raise RuntimeError("retrieval failed")

    group, calls = FanOut(2, prime), Calls()
    thread = threading.Thread(target=lambda: group.run(lambda _: calls(fan_out.take(), view("A")), None))
    thread.start()
    with pytest.raises(RuntimeError, match="retrieval failed"):
        group.run(fails, None)
    thread.join(timeout=5)
    assert len(calls.started) == 1 and prime.copies == []


def test_a_copying_step_that_fails_still_releases_every_member():
    prime, calls = Recorder(fail=True), Calls()
    members(FanOut(2, prime), [lambda g: calls(g, view("A")), lambda g: calls(g, view("B"))])
    assert len(prime.copies) == 1 and len(calls.started) == 2


def test_a_cancelled_run_stops_waiting_while_copying_goes_on():
    copied = threading.Event()  # the copy is held until the test ends: only the cancel can free the members
    prime, calls = Recorder(release=copied), Calls()
    group, cancel, ended = FanOut(2, prime), threading.Event(), []

    def member(_):
        calls(fan_out.take(), view("A"), cancel)
        ended.append("A")

    threads = [
        threading.Thread(target=group.run, args=(member, None)),
        threading.Thread(target=group.run, args=(lambda _: calls(fan_out.take(), view("B"), cancel), None)),
    ]
    for thread in threads:
        thread.start()
    wait_until(lambda: prime.copies, "the shared prefix being copied")
    cancel.set()
    wait_until(lambda: not any(t.is_alive() for t in threads), "both cancelled members to stop waiting")
    assert ended == ["A"] and prime.done_at == 0.0  # it went on, without an error, while the copy still went on
    copied.set()


class GroupedLLM(ScriptedLLM):
    """A scripted backend that groups calls made together as the embedded server does, copying with a recorder."""

    def __init__(self, prime: Recorder, **kwargs):
        super().__init__(**kwargs)
        self.prime = prime

    def fan_out(self, size: int):
        return FanOut(size, self.prime)


def test_run_context_groups_the_first_call_of_each_parallel_item_and_cached_replies_skip(tmp_path):
    llm = GroupedLLM(Recorder(), cache=ResponseCache(tmp_path / "cache.sqlite"))
    llm.on("You are the", "ok")
    ctx = RunContext(Run(method="mass", question="q"), llm)

    def ask(role: str) -> str:
        first = ctx.ask(view(role), stage="views", agent=role, role=role).text
        ctx.ask(view(role + " again"), stage="views", agent=role, role=role)  # a second call is not in the group
        return first

    assert ctx.parallel(ask, list(ROLES)) == ["ok"] * 3
    assert [n for _, n in llm.prime.copies] == [3]
    ctx.parallel(ask, ["Summarizer", "Extractor", "Verifier"])  # two first calls come from the response cache
    assert [n for _, n in llm.prime.copies] == [3]  # one left for the model: nothing copied

    ctx.max_workers = 2  # three items cannot all start at once: no group, so no one waits for the third
    ctx.parallel(ask, ["A", "B", "C"])
    assert [n for _, n in llm.prime.copies] == [3]

"""``python -m core serve`` (``make serve``): the studio served to the other machines of this network, in shared mode.

Prints the address participants open, with a QR code of it, and the owner's passcode (made up for this start when
none is set in the environment or ``.streamlit/secrets.toml``: it then appears on this terminal and nowhere else),
then runs the app on every interface.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from core.engine.settings import REPO_ROOT, settings
from core.studio.access import OwnerSignIn
from core.studio.serving import base_url, lan_address, new_passcode, qr_text

SECRETS = REPO_ROOT / ".streamlit" / "secrets.toml"
OWNER_KEYS = ("MEDRAG_OWNER_PASSCODE", "MEDRAG_OWNER_EMAILS")


def register(commands) -> None:
    p = commands.add_parser("serve", help="serve the studio to this network (shared mode: an owner and visitors)")
    p.add_argument("--port", type=port_number, default=8501)
    p.add_argument("--address", default="0.0.0.0", help="the address to listen on (default: every interface)")
    p.add_argument("--host", help="the address participants open (default: this machine's address on its network)")
    p.set_defaults(handler=handle)


def port_number(text: str) -> int:
    """A TCP port as typed; argparse names the argument when this refuses it, before anything is printed."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: a port is a whole number from 1 to 65535")
    return port


def listen_problem(address: str, port: int) -> str | None:
    """Why the app could not listen on ``address``:``port`` (in use, no such address), or None. Asked before the
    banner, so a passcode is never printed for a server that does not start."""
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the app's server sets it
            probe.bind(infos[0][4])
    except OSError as exc:
        return f"cannot listen on {address}:{port}: {exc.strerror or exc}"
    return None


def _secrets(path: Path = SECRETS) -> dict[str, str]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    return {k: str(v) for k, v in data.items() if k in OWNER_KEYS and isinstance(v, str)}


@dataclass
class Plan:
    command: list[str]
    env: dict[str, str]
    join: str  # the address participants open
    passcode_note: str


def plan(port: int, address: str, host: str | None, env: Mapping[str, str], secrets: Mapping[str, str]) -> Plan:
    """What ``serve`` runs, with which environment, and what it tells the owner (no side effects)."""
    # Read as the app will read them, the secrets file over the environment; a passcode too short is refused here.
    sign_in = OwnerSignIn.from_settings(settings(**{**env, **secrets}))
    child = dict(env)
    if sign_in.configured:
        where = ".streamlit/secrets.toml" if any(secrets.get(k) for k in OWNER_KEYS) else "the environment"
        note = f"Owner sign-in: as set in {where}."
    else:
        child["MEDRAG_OWNER_PASSCODE"] = passcode = new_passcode()
        note = (
            f"Owner passcode for this start: {passcode}\n(sign in from the sidebar; it is shown here only, and a "
            "new one is made at every start unless MEDRAG_OWNER_PASSCODE is set)"
        )
    join = base_url(host or lan_address(), port)
    child["MEDRAG_JOIN_URL"] = join
    streamlit = str(Path(sys.executable).with_name("streamlit"))
    command = [
        streamlit,
        "run",
        str(REPO_ROOT / "streamlit_app.py"),
        "--server.address",
        address,
        "--server.port",
        str(port),
    ]
    return Plan(command, child, join, note)


def banner(p: Plan) -> str:
    return (
        f"\nMedRAG Studio, shared with this network. Participants open\n\n    {p.join}/workshop\n\n"
        f"{qr_text(p.join + '/workshop')}\n{p.passcode_note}\nStop it with Ctrl-C.\n"
    )


def handle(args) -> int:
    if problem := listen_problem(args.address, args.port):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    p = plan(args.port, args.address, args.host, os.environ, _secrets())
    print(banner(p), flush=True)
    os.execve(p.command[0], p.command, p.env)  # the app takes this process over: Ctrl-C stops it
    return 0

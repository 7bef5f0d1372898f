"""Settings declared once (``core.engine.settings``): every variable the code reads is declared there and read nowhere else,
a test's environment counts at once, a value that cannot be used is refused by name, keys never show, and in the
app ``.streamlit/secrets.toml`` wins over the environment."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.engine.llm import profiles
from core.engine.settings import NAMES, REPO_ROOT, SECRETS, ConfigError, settings, tables
from core.studio.runfiles.masking import known_secrets

SECRET = "sk-settings-test-0123456789"
CODE = [REPO_ROOT / "streamlit_app.py", *(REPO_ROOT / "core").rglob("*.py"), *(REPO_ROOT / "ui").rglob("*.py")]


def test_every_variable_the_code_names_is_declared_with_a_meaning():
    named = {m for path in CODE for m in re.findall(r"\bMEDRAG_[A-Z_]*[A-Z]\b", path.read_text(encoding="utf-8"))}
    assert named and named <= set(NAMES), f"not declared in core/engine/settings.py: {sorted(named - set(NAMES))}"
    for key in {k for p in profiles.PROFILES.values() for k in p.key_env}:
        assert key in SECRETS, f"{key}, a provider's key, is not a secret setting"
    assert all(f.description for f in type(settings()).model_fields.values())


def test_only_the_settings_module_reads_the_environment():
    reads = re.compile(r"os\.environ\.get\(|os\.getenv\(|os\.environ\[[^\]]+\](?!\s*=)|st\.secrets")
    readers = [
        path.relative_to(REPO_ROOT).as_posix() for path in CODE if reads.search(path.read_text(encoding="utf-8"))
    ]
    assert readers == [
        "core/engine/settings.py",
        "ui/common/state.py",
    ]  # the app reads .streamlit/secrets.toml, for core.engine.settings


def test_a_changed_variable_counts_at_once(monkeypatch, tmp_path):
    monkeypatch.setenv("MEDRAG_TIMEOUT", "12.5")
    assert settings().timeout == 12.5
    monkeypatch.setenv("MEDRAG_TIMEOUT", "7")
    monkeypatch.setenv("MEDRAG_WORKSHOP_PACK", str(tmp_path))
    assert settings().timeout == 7 and settings().workshop_pack == tmp_path
    monkeypatch.setenv("MEDRAG_TIMEOUT", "  ")  # blank is unset: the default
    assert settings().timeout == 300
    assert settings(MEDRAG_TIMEOUT="9").timeout == 9  # an override wins over the environment


@pytest.mark.parametrize(
    "name, value, said",
    [
        ("MEDRAG_BACKGROUND_INDEX", "maybe", "MEDRAG_BACKGROUND_INDEX must be 1 or 0, not 'maybe'"),
        ("MEDRAG_LLAMA_VERBOSITY", "loud", "MEDRAG_LLAMA_VERBOSITY must be a whole number 0 or more, not 'loud'"),
        ("MEDRAG_REASONING_EFFORT", "max", "MEDRAG_REASONING_EFFORT must be one of low, medium, high, not 'max'"),
        (
            "MEDRAG_BASE_URL",
            "ftp://me:hunter2@host/v1",
            "MEDRAG_BASE_URL must start with http:// or https://, not 'ftp://***@host/v1'",
        ),
        (
            "MEDRAG_BASE_URL",
            "http://me:pw@10.0.0.5:\uff18\uff10/v1",  # fullwidth digits: urllib raised a bare ValueError
            "MEDRAG_BASE_URL has a port that is not a number from 1 to 65535 ('\uff18\uff10'): "
            "'http://***@10.0.0.5:\uff18\uff10/v1'",
        ),
        (
            "MEDRAG_SEARCH_URL",
            "ftp://x",  # was taken as a folder named "ftp:"
            "MEDRAG_SEARCH_URL must be a folder or a Qdrant server's http:// or https:// URL, not 'ftp://x'",
        ),
        ("MEDRAG_SEARCH_URL", "http://:6333", "MEDRAG_SEARCH_URL has no host: 'http://:6333'"),
        (
            "MEDRAG_JOIN_URL",
            "studio.lan:8501",
            "MEDRAG_JOIN_URL must start with http:// or https://, not 'studio.lan:8501'",
        ),
        (
            "MEDRAG_OWNER_EMAILS",
            "ana@example.org, bob",
            "MEDRAG_OWNER_EMAILS must be emails separated by commas; 'bob' is not one",
        ),
    ],
)
def test_a_value_that_cannot_be_used_is_refused_by_name(monkeypatch, name, value, said):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as refused:
        settings()
    assert str(refused.value) == said


def test_keys_never_show_and_every_one_is_masked_in_run_files(monkeypatch):
    monkeypatch.setenv("MEDRAG_SEARCH_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET + "-ant")
    configured = settings(MEDRAG_OWNER_PASSCODE="owner-passcode-1")
    assert SECRET not in repr(configured) and "owner-passcode-1" not in repr(configured)
    assert configured.secret("MEDRAG_SEARCH_API_KEY") == SECRET
    assert set(known_secrets(configured)) == {SECRET, SECRET + "-ant", "owner-passcode-1"}


def test_the_configuration_page_table_is_drawn_from_the_declarations():
    page = (REPO_ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert f"<!-- table:settings -->\n{tables()['settings']}\n<!-- /table -->" in page
    assert all(f"| `{name}` |" in page for name in NAMES)


def test_in_the_app_the_secrets_file_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv("MEDRAG_BASE_URL", "http://localhost:8000/v1")
    monkeypatch.setenv("MEDRAG_MODEL", "from-the-environment")
    at = AppTest.from_string("from ui.settings.page import page\npage()", default_timeout=30)
    at.secrets["MEDRAG_MODEL"] = "from-the-secrets-file"
    at.secrets["MEDRAG_API_KEY"] = SECRET
    at.run()
    assert not at.exception
    assert at.text_input(key="settings.model").value == "from-the-secrets-file"
    shown = "\n".join(e.value for kind in ("markdown", "caption", "info", "warning") for e in getattr(at, kind))
    assert "the server's `MEDRAG_API_KEY` from Streamlit secrets" in shown and SECRET not in shown


def test_a_bad_value_in_the_secrets_file_is_said_on_the_page_not_as_a_traceback(monkeypatch):
    at = AppTest.from_file(str(Path(REPO_ROOT / "streamlit_app.py")), default_timeout=30)
    at.secrets["MEDRAG_MAX_RETRIES"] = "many"
    at.run()
    assert not at.exception
    assert "MEDRAG_MAX_RETRIES must be a whole number 0 or more, not 'many'" in at.error[0].value

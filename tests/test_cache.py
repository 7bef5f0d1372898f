import sqlite_utils

from core.engine.llm.cache import ResponseCache, cache_key

MSGS = [{"role": "user", "content": "hi"}]


def test_key_depends_on_model_messages_and_params_only():
    base = cache_key("m", MSGS, {"temperature": 0, "max_tokens": 10})
    assert base == cache_key("m", [dict(MSGS[0])], {"max_tokens": 10, "temperature": 0})  # order-free
    assert base != cache_key("other", MSGS, {"temperature": 0, "max_tokens": 10})
    assert base != cache_key("m", [{"role": "user", "content": "hi!"}], {"temperature": 0, "max_tokens": 10})
    assert base != cache_key("m", MSGS, {"temperature": 0, "max_tokens": 11})


def test_put_get_and_persistence(tmp_path):
    path = tmp_path / "c.sqlite"
    ResponseCache(path).put("k", "m", "text", 5, 3)
    ResponseCache(path).put("cut", "m", "tex", 5, 1, finish_reason="length")
    assert ResponseCache(path).get("k") == {
        "text": "text",
        "prompt_tokens": 5,
        "completion_tokens": 3,
        "finish_reason": "stop",
    }
    assert ResponseCache(path).get("cut")["finish_reason"] == "length"
    assert ResponseCache(path).get("missing") is None


def test_corrupted_row_is_ignored_and_rewritten(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", "m", "text", 5, 3)
    cache.db.execute("UPDATE responses SET text = NULL, prompt_tokens = 'garbage' WHERE key = 'k'")
    cache.db.conn.commit()
    assert cache.get("k") is None
    cache.put("k", "m", "fresh", 1, 1)
    assert cache.get("k") == {"text": "fresh", "prompt_tokens": 1, "completion_tokens": 1, "finish_reason": "stop"}
    assert len(cache) == 1


def test_a_cache_from_before_finish_reasons_were_kept_replays_its_replies_as_finished(tmp_path):
    old = sqlite_utils.Database(tmp_path / "old.sqlite")
    old["responses"].insert(
        {"key": "k", "model": "m", "text": "B.", "prompt_tokens": 3, "completion_tokens": 1, "created": 0.0}, pk="key"
    )
    old.close()
    cache = ResponseCache(tmp_path / "old.sqlite")
    assert cache.get("k") == {"text": "B.", "prompt_tokens": 3, "completion_tokens": 1, "finish_reason": "stop"}
    cache.put("new", "m", "A", 3, 1, finish_reason="length")
    assert cache.get("new")["finish_reason"] == "length"

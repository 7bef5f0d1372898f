from core.llm.client import LLM, Endpoint, LLMError, LLMParseError, LLMResponse

__all__ = ["LLM", "Endpoint", "LLMError", "LLMParseError", "LLMResponse"]

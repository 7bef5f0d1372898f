from core.engine.llm.client import LLM, LLMCancelled, LLMError, LLMParseError, LLMResponse, Refused
from core.engine.llm.endpoint import ConfigError, Endpoint

__all__ = ["LLM", "ConfigError", "Endpoint", "LLMCancelled", "LLMError", "LLMParseError", "LLMResponse", "Refused"]

from core.llm.client import LLM, LLMCancelled, LLMError, LLMParseError, LLMResponse, Refused
from core.llm.endpoint import ConfigError, Endpoint

__all__ = ["LLM", "ConfigError", "Endpoint", "LLMCancelled", "LLMError", "LLMParseError", "LLMResponse", "Refused"]

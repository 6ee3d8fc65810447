"""Access to a chat model through the ``openai`` package, or none (offline).

Any OpenAI-compatible endpoint works (OpenAI, vLLM, Ollama, llama.cpp
servers): ``MODEL_BASE_URL``, ``MODEL_NAME``, ``MODEL_API_KEY``. With no base
URL configured, :func:`chat_model` returns None and callers use their labelled
offline fallback. Prompts live in versioned files beside the code that uses
them (:class:`Prompt`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from libs.settings import Secret, setting


@dataclass(frozen=True)
class ModelSettings:
    base_url: str = setting(
        "BASE_URL", "", "OpenAI-compatible endpoint; empty: the labelled offline fallback.")
    name: str = setting("NAME", "gpt-4o-mini", "Utility model at that endpoint.")
    api_key: Secret = setting("API_KEY", Secret(""), "API key for the endpoint (never logged).")
    timeout_seconds: float = setting("TIMEOUT_SECONDS", 60.0, "Longest wait for one model call.")


@dataclass(frozen=True)
class Prompt:
    """A versioned prompt file: ``<name>.v<N>.md``; its id says which version made an output."""

    path: Path

    @property
    def id(self) -> str:
        return self.path.name.removesuffix(".md")

    @property
    def text(self) -> str:
        return self.path.read_text()


class ChatModel:
    def __init__(self, settings: ModelSettings) -> None:
        from openai import AsyncOpenAI

        self.name = settings.name
        self._client = AsyncOpenAI(base_url=settings.base_url,
                                   api_key=settings.api_key.reveal() or "unused",
                                   timeout=settings.timeout_seconds, max_retries=1)

    async def complete(self, system: str, user: str, *, max_tokens: int = 1024) -> str:
        reply = await self._client.chat.completions.create(
            model=self.name,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            temperature=0,
            max_tokens=max_tokens,
        )
        return (reply.choices[0].message.content or "").strip()

    async def close(self) -> None:
        await self._client.close()


def chat_model(settings: ModelSettings) -> ChatModel | None:
    return ChatModel(settings) if settings.base_url else None

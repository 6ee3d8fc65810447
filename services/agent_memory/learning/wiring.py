"""Learning's parts, built for agent memory's app and released with it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agentmemory.agent_memory.v1 import learning_service_pb2, learning_service_pb2_grpc

from libs.clients.journal import JournalClient
from libs.feed import FeedFollower
from libs.model import chat_model
from libs.server import ServiceBinding
from libs.tasks import Loops
from services.agent_memory.learning.credentials import CredentialHolder
from services.agent_memory.learning.episodes import EpisodeSink
from services.agent_memory.learning.extraction import ModelExtractor, OfflineExtractor
from services.agent_memory.learning.learner import Learner
from services.agent_memory.learning.procedures import Procedures
from services.agent_memory.learning.service import Learning
from services.agent_memory.learning.servicer import LearningServicer
from services.agent_memory.learning.store import LearningStore
from services.agent_memory.learning.suggestions import Suggestions

logger = logging.getLogger(__name__)

SERVICE_NAME = learning_service_pb2.DESCRIPTOR.services_by_name["LearningService"].full_name


@dataclass
class LearningParts:
    service: Learning
    learner: Learner | None  # None when no journal is configured
    follower: FeedFollower | None
    binding: ServiceBinding

    def start(self, loops: Loops, hygiene_hours: float) -> None:
        loops.start(self._hygiene_forever(hygiene_hours))
        if self.learner is not None and self.follower is not None:  # (set together)
            loops.start(self.follower.run_forever(), stop=self.follower.stop)
            loops.start(self.learner.run_forever(), stop=self.learner.stop)

    async def _hygiene_forever(self, hours: float) -> None:
        while True:
            try:
                await self.service.hygiene()
            except Exception:
                logger.exception("learning retention pass failed; next one in %.1f h", hours)
            await asyncio.sleep(hours * 3600)


@contextlib.asynccontextmanager
async def learning(config, repository, memory, index, embedder, clock, tracing,
                   episodes: EpisodeSink | None) -> AsyncIterator[LearningParts]:
    settings = config.learning
    store = LearningStore(repository.pool)
    credentials = CredentialHolder(settings.credentials_ttl_seconds)
    suggestions = Suggestions(store, memory, clock)
    procedures = Procedures(store, index, embedder, suggestions, clock)
    service = Learning(store, suggestions, procedures, credentials, memory, clock)
    servicer = LearningServicer(service)
    binding = ServiceBinding(SERVICE_NAME, lambda s: learning_service_pb2_grpc
                             .add_LearningServiceServicer_to_server(servicer, s))
    model = chat_model(config.model)
    journal = None
    async with contextlib.AsyncExitStack() as stack:
        if model is not None:
            stack.push_async_callback(model.close)
        learner = follower = None
        if settings.journal_address:
            journal = JournalClient(settings.journal_address,
                                    internal_token=config.process.internal.token,
                                    interceptors=tracing.client_interceptors())
            stack.push_async_callback(journal.close)
            if model is None:
                logger.warning("no model configured (MODEL_BASE_URL): facts are extracted from "
                               "runs by the labelled offline rules (%s)",
                               OfflineExtractor.generator)
            extractor = ModelExtractor(model) if model else OfflineExtractor()
            learner = Learner(store=store, journal=journal, memory=memory, extractor=extractor,
                              suggestions=suggestions, procedures=procedures,
                              credentials=credentials, clock=clock, episodes=episodes,
                              retry_seconds=settings.retry_seconds)
            follower = learner.follower()
        yield LearningParts(service, learner, follower, binding)

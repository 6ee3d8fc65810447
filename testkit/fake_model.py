"""The one stand-in: a small OpenAI-compatible server on loopback.

No model can run offline here, so tests start this server: chat completions
and embeddings (float and base64), deterministic answers, and a record of
every request so tests can check what a prompt contained. ``fail`` makes
matching requests answer HTTP 500.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class FakeModel:
    requests: list[dict] = field(default_factory=list)
    fail: Callable[[dict], bool] = field(default=lambda request: False)
    facts: list[dict] = field(default_factory=list)
    # What extraction after a run gets (agent memory's run_facts prompt).
    run_facts: list[dict] = field(default_factory=list)
    delay_seconds: float = 0.0  # how long each chat completion takes
    _server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def chats(self, marker: str = "") -> list[dict]:
        """Recorded chat requests whose system prompt contains ``marker``."""
        return [r for r in self.requests if r["path"].endswith("/chat/completions")
                and marker in r["body"]["messages"][0]["content"]]

    def start(self) -> FakeModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                request = {"path": self.path, "body": body}
                model.requests.append(request)
                if model.fail(request):
                    self._send(500, {"error": {"message": "induced failure"}})
                elif self.path.endswith("/chat/completions"):
                    time.sleep(model.delay_seconds)
                    self._send(200, model._chat(body))
                elif self.path.endswith("/embeddings"):
                    self._send(200, model._embeddings(body))
                else:
                    self._send(404, {"error": {"message": "unknown path"}})

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _chat(self, body: dict) -> dict:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if "durable facts" in system:
            content = json.dumps(self.facts)
        elif "one finished run" in system:
            content = json.dumps(self.run_facts)
        elif "You rerank memories" in system:
            content = json.dumps({"scores": self.rerank_scores(user)})
        elif "You parse a search query" in system:
            content = json.dumps(self.parsed_query(user))
        elif "You list the named things" in system:
            memory = re.search(r"<memory>(.*?)</memory>", user, re.S).group(1)
            # Deterministic stand-in for a model's judgement: long lower-case words.
            content = json.dumps({"entities": re.findall(r"\b[a-z]{9,}\b", memory)})
        else:
            offsets = re.findall(r"\(#(\d+)\)", user)
            previous = re.search(r"<previous_summary>\n(.*?)\n</previous_summary>", user, re.S)
            content = (f"Summary through message {offsets[-1] if offsets else 0} "
                       f"({len(offsets)} new messages). "
                       f"Earlier: {previous.group(1)[:200] if previous else ''}").strip()
        return {"id": "chatcmpl-fake", "object": "chat.completion", "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    @staticmethod
    def rerank_scores(prompt: str) -> dict[str, int]:
        """Deterministic 0-10 scores: 10 x the share of the query's words (3+ letters) a
        candidate contains, rounded down."""
        query = re.search(r"<query>(.*?)</query>", prompt, re.S).group(1)
        words = {w for w in re.findall(r"[a-z0-9]{3,}", query.lower())}
        scores = {}
        for number, text in re.findall(r"^\[(\d+)\] (.*)$", prompt, re.M):
            found = set(re.findall(r"[a-z0-9]{3,}", text.lower()))
            scores[number] = (10 * len(words & found)) // max(1, len(words))
        return scores

    @staticmethod
    def parsed_query(prompt: str) -> dict:
        """Capitalised words as entities, every word as a keyword, kinds named literally."""
        query = re.search(r"<query>(.*?)</query>", prompt, re.S).group(1)
        kinds = [k for k in ("decision", "correction", "preference", "instruction")
                 if k in query.lower()]
        return {"entities": re.findall(r"\b[A-Z][a-z]+\b", query),
                "keywords": re.findall(r"[a-z0-9]+", query.lower()), "kinds": kinds}

    @staticmethod
    def _embeddings(body: dict) -> dict:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dimensions = body.get("dimensions") or 1536
        data = []
        for index, text in enumerate(inputs):
            seed = hashlib.sha256(str(text).encode()).digest()
            vector = [((seed[i % 32] + i) % 17 - 8) / 8.0 for i in range(dimensions)]
            if body.get("encoding_format") == "base64":
                embedding = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode()
            else:
                embedding = vector
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        return {"object": "list", "data": data, "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1}}

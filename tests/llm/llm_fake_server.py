"""A local HTTP server speaking the OpenAI chat-completions API, for LLM-layer tests.

``responder(body, n)`` gets the decoded request and its 0-based sequence number
and returns ``(status, content)`` (content: the assistant text for status 200,
else an error message) or a :class:`Reply` scripting how a real server answers:
``finish_reason``, a separate ``reasoning_content``, ``content: null``, headers
such as ``Retry-After``, a missing usage block, or an SSE body.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    content: str | None = ""
    finish_reason: str = "stop"
    reasoning: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, int] | None = field(
        default_factory=lambda: {"prompt_tokens": 100, "completion_tokens": 20,
                                 "total_tokens": 120})
    sse: bool = False  # answer as an event stream although no stream was asked for


Responder = Callable[[dict[str, Any], int], "tuple[int, str] | Reply"]


def _payload(reply: Reply, n: int, model: str) -> dict[str, Any]:
    if reply.status != 200:
        return {"error": {"message": reply.content, "type": "server_error",
                          "code": reply.status}}
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    payload: dict[str, Any] = {
        "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": reply.finish_reason, "message": message}],
    }
    if reply.usage is not None:
        payload["usage"] = reply.usage
    return payload


def _sse(reply: Reply, n: int, model: str) -> bytes:
    text = reply.content or ""
    pieces = [text[i : i + 7] for i in range(0, len(text), 7)] or [""]
    lines = []
    for k, piece in enumerate(pieces):
        chunk = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "model": model,
                 "choices": [{"index": 0, "delta": {"content": piece},
                              "finish_reason": reply.finish_reason
                              if k == len(pieces) - 1 else None}]}
        lines.append("data: " + json.dumps(chunk))
    if reply.usage is not None:
        lines.append("data: " + json.dumps({"choices": [], "usage": reply.usage}))
    lines.append("data: [DONE]")
    return ("\n\n".join(lines) + "\n\n").encode()


class FakeOpenAI:
    def __init__(self, responder: Responder, delay: float = 0.0) -> None:
        self.responder = responder
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.inflight = 0
        self.max_inflight = 0
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    n = len(fake.requests)
                    fake.requests.append(body)
                    fake.headers.append(dict(self.headers))
                    fake.inflight += 1
                    fake.max_inflight = max(fake.max_inflight, fake.inflight)
                try:
                    if fake.delay:
                        time.sleep(fake.delay)
                    if self.path.rstrip("/") != "/v1/chat/completions":
                        reply = Reply(404, f"no route {self.path}")
                    else:
                        got = fake.responder(body, n)
                        reply = got if isinstance(got, Reply) else Reply(got[0], got[1])
                finally:
                    with fake._lock:
                        fake.inflight -= 1
                model = body.get("model", "")
                if reply.sse and reply.status == 200:
                    data, kind = _sse(reply, n, model), "text/event-stream"
                else:
                    data, kind = json.dumps(_payload(reply, n, model)).encode(), "application/json"
                self.send_response(reply.status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def system_prompt(body: dict[str, Any]) -> str:
    return next((m["content"] for m in body.get("messages", []) if m["role"] == "system"), "")


def user_prompt(body: dict[str, Any]) -> str:
    return next((m["content"] for m in body.get("messages", []) if m["role"] == "user"), "")

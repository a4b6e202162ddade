"""A local HTTP server speaking the OpenAI chat-completions API, for LLM-layer tests.

``responder(body, n)`` gets the decoded request and its 0-based sequence number
and returns ``(status, content)``; content is the assistant text (status 200)
or an error message.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any], int], tuple[int, str]]


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
                        status, text = 404, f"no route {self.path}"
                    else:
                        status, text = fake.responder(body, n)
                finally:
                    with fake._lock:
                        fake.inflight -= 1
                if status == 200:
                    payload = {
                        "id": f"chatcmpl-{n}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", ""),
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": text}}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20,
                                  "total_tokens": 120},
                    }
                else:
                    payload = {"error": {"message": text, "type": "server_error", "code": status}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
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

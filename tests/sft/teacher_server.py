"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests; it stops by itself after ``lifetime`` s.

``reply(body, n)`` decides each answer from the parsed request body and the request's number (1-based):
return a string (the assistant content), an ``(status, headers, text)`` tuple for an error, or ``None``
to drop the connection without answering. Every request body is kept in ``requests``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class TeacherServer:
    def __init__(self, reply, lifetime: float = 60.0):
        self.reply = reply
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        self._stopped = False
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    n = len(server.requests)
                answer = server.reply(body, n)
                if answer is None:
                    self.close_connection = True
                    return
                if isinstance(answer, tuple):
                    status, headers, text = answer
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    payload = text.encode()
                else:
                    self.send_response(200)
                    payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": answer}}]}).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                try:
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client was killed meanwhile
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True

    def __enter__(self):
        self._thread.start()
        self._timer.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self._timer.cancel()
        if self._thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()

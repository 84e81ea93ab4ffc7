#!/usr/bin/env python3
"""A git smart-HTTP server for tests: `git http-backend` behind Basic auth.

Usage: git_http_server.py PROJECT_ROOT TOKEN
Serves the repositories under PROJECT_ROOT on 127.0.0.1 at a free port, which
it prints as the first line of stdout. A request must carry Basic auth whose
password is TOKEN (any user name); others get 401. Runs until killed.
"""
import base64
import http.server
import os
import subprocess
import sys

ROOT, TOKEN = sys.argv[1], sys.argv[2]
BACKEND = "/usr/lib/git-core/git-http-backend"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def authorized(self):
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Basic "):
            return False
        try:
            _, _, password = base64.b64decode(auth[6:]).decode().partition(":")
        except Exception:
            return False
        return password == TOKEN

    def serve(self):
        if not self.authorized():
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
        env = {
            "GIT_PROJECT_ROOT": ROOT,
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "test",
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        }
        out = subprocess.run([BACKEND], input=body, env=env, capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = serve
    do_POST = serve


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()

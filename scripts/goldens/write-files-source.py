"""Run upstream cloud-init's cc_write_files.write_files on
pkg/modules/testdata/write_files_source/config.yaml against an HTTP server
on 127.0.0.1 (/ok echoes the Authorization header, /missing is 404,
/broken 500; a 503
would be retried forever, as cloud-init's readurl waits out 503s past its retries) and record the files it writes, how often each path was
requested and the warnings, for pkg/modules' TestWriteFilesSourceUpstream.

  scripts/goldens/write-files-source.py pkg/modules/testdata/write_files_source \
      > pkg/modules/testdata/write_files_source/upstream.json

Writes are recorded, not made; file:// sources are read from the case's
root/ tree; url_helper's sleeps between retries are skipped. The server's
address is written as @URL@.
"""
import http.server
import json
import logging
import os
import sys
import threading

import yaml
from cloudinit import url_helper, util
from cloudinit.config import cc_write_files

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/testdata/write_files_source"], out="pkg/modules/testdata/write_files_source/upstream.json")

CASE = sys.argv[1]
hits = {}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        hits[self.path] = hits.get(self.path, 0) + 1
        if self.path == "/ok":
            body = ("token=%s\n" % self.headers.get("Authorization")).encode()
            self.send_response(200)
        elif self.path == "/broken":
            body = b"down\n"
            self.send_response(500)
        else:
            body = b"not found\n"
            self.send_response(404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d" % srv.server_address[1]
with open(os.path.join(CASE, "config.yaml")) as f:
    cfg = yaml.safe_load(f.read().replace("@URL@", url))

files = {}


def write_file(path, content, *a, **kw):
    files[str(path)] = content.decode() if isinstance(content, bytes) else content


real_read = url_helper._read_file
url_helper._read_file = lambda path, **kw: real_read(os.path.join(CASE, "root", path.lstrip("/")), **kw)
url_helper.time.sleep = lambda s: None
util.write_file = write_file
util.chownbyname = lambda *a, **kw: None
util.get_permissions = lambda p: 0o644
warnings = []


class Rec(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.WARNING:
            warnings.append(record.getMessage().replace(url, "@URL@").split("\n")[0])


logging.getLogger().addHandler(Rec())
cc_write_files.write_files("write_files", cfg["write_files"], "root:root")
srv.shutdown()
json.dump({"files": files, "hits": hits, "warnings": warnings}, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")

"""Record the POSTs upstream cc_phone_home sends, for pkg/modules tests.

Run through scripts/upstream-cloudinit.sh --python (see docs/compatibility.md):

    scripts/goldens/phone-home.py <host keys dir> > pkg/modules/testdata/phone_home/upstream.json

A server on 127.0.0.1 (an ephemeral port) records each request; upstream's
handle() runs for every case below with instance-id iid-test, hostname and
fqdn meta-host, and the SSH host public keys of <host keys dir>
(ssh_host_{rsa,ecdsa,ed25519}_key.pub; /etc/ssh is never read). The output
maps each case to the method, path, Content-Type and body it received.
"""

import http.server
import json
import os
import sys
import threading

from cloudinit import util
from cloudinit.config import cc_phone_home as cc

CASES = {
    "all": {"url": "http://HOST/$INSTANCE_ID/", "post": "all", "tries": 1},
    "list": {"url": "http://HOST/phone_home?unset=admin_pass&id=${INSTANCE_ID}",
             "post": ["instance_id", "fqdn", "instance_id", "nope", "pub_key_ed25519"], "tries": 1},
    "default-post": {"url": "http://HOST/x", "tries": 1},
}

got = []


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        got.append({"method": "POST", "path": self.path, "content_type": self.headers.get("Content-Type"),
                    "body": self.rfile.read(n).decode()})
        self.send_response(200)
        self.end_headers()

    def log_message(self, *a):
        pass


class Host:
    def __init__(self, h):
        self.hostname = h


class Cloud:
    paths = None

    def get_instance_id(self):
        return "iid-test"

    def get_hostname(self, fqdn=False, **kw):
        return Host("meta-host")


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/testdata/ssh_console"], out="pkg/modules/testdata/phone_home/upstream.json")


def main():
    keys = sys.argv[1]
    orig_load = util.load_text_file
    util.load_text_file = lambda fn, *a, **k: orig_load(
        os.path.join(keys, os.path.basename(fn)) if fn.startswith("/etc/ssh/") else fn, *a, **k)
    util.fetch_ssl_details = lambda paths=None: None
    srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    host = "127.0.0.1:%d" % srv.server_address[1]
    out = {}
    for name, ph in CASES.items():
        del got[:]
        ph = dict(ph, url=ph["url"].replace("HOST", host))
        cc.handle("phone_home", {"phone_home": ph}, Cloud(), [])
        out[name] = {"config": dict(ph, url=ph["url"].replace(host, "HOST")), "requests": list(got)}
    srv.shutdown()
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

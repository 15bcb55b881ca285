"""Print cloud-init's ssh_authkey_fingerprints console table for each case.

Run through scripts/upstream-cloudinit.sh --python (see
docs/compatibility.md): for the authorized_keys file given, and each hash
name, upstream's _pprint_key_entries output for user alice, separated by
"=== <hash>" lines. pkg/modules/users/testdata/ssh_console/want-authkey.txt is
this script's output.
"""

import os
import sys

from cloudinit import ssh_util
from cloudinit.config import cc_ssh_authkey_fingerprints as cc
from cloudinit.log import log_util

out = []


def multi_log(text, *args, **kwargs):
    out.append(text)


log_util.multi_log = multi_log

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import goldenlib  # noqa: E402

goldenlib.args_or_defaults(["pkg/modules/users/testdata/ssh_console/authorized_keys"], out="pkg/modules/users/testdata/ssh_console/want-authkey.txt")

keys_file = sys.argv[1]
shown_as = "/home/alice/.ssh/authorized_keys"
entries = ssh_util.parse_authorized_keys([keys_file])
for h in ("sha256", "md5", "sha512", "whirlpool-ish"):
    out.append("=== %s\n" % h)
    cc._pprint_key_entries("alice", shown_as, entries, h)
out.append("=== none\n")
cc._pprint_key_entries("bob", "/home/bob/.ssh/authorized_keys", [], "sha256")
sys.stdout.write("".join(out))

#!/usr/bin/env bash
# scripts/goldens/keys-to-console.sh — what upstream's keys_to_console prints, for
# pkg/modules/users tests.
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/keys-to-console.sh
#
# Runs cloud-init's helper tools/write-ssh-key-fingerprints (what
# cc_keys_to_console runs) on the host keys in
# pkg/modules/testdata/ssh_console instead of /etc/ssh, with logger told
# not to write to the system log (--no-act; -s still echoes each line),
# for each blacklist case, and keeps what cc_keys_to_console prints:
# the output stripped, plus a newline. Syslog timestamps become
# "Nov 22 08:36:48", the clock of the Go test. Needs ssh-keygen and
# util-linux logger. The helper runs inside scripts/upstream-cloudinit.sh's
# namespace (as root), like every upstream run here.
set -euo pipefail
. "$(dirname "$0")/lib/goldenlib.sh"
need_src keys-to-console
src=$CLOUDINIT_SRC
keys=$repo/pkg/modules/testdata/ssh_console
out=$repo/pkg/modules/users/testdata/ssh_console/upstream-keys-to-console.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -e "s#/etc/ssh/ssh_host_#$keys/ssh_host_#g" \
	-e 's#logger \$logger_opts#logger --no-act --socket-errors=off $logger_opts#' \
	"$src/tools/write-ssh-key-fingerprints" >"$tmp/helper"
chmod +x "$tmp/helper"
: >"$out"
while IFS='|' read -r name fp key; do
	printf '=== %s\n' "$name" >>"$out"
	# In scripts/upstream-cloudinit.sh's throwaway namespace, as every upstream run.
	text=$(upstream --python -c 'import os, sys; os.execv(sys.argv[1], sys.argv[1:])' "$tmp/helper" "$fp" "$key")
	# cc_keys_to_console: "%s\n" % stdout.strip()
	printf '%s\n' "$text" | sed -E 's/^<14>[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} cloud-init: /<14>Nov 22 08:36:48 cloud-init: /' >>"$out"
done <<'CASES'
all||
blacklists|ssh-rsa,ecdsa-sha2-nistp256|ssh-ed25519,ssh-rsa,ecdsa-sha2-nistp256
keys-only-ed25519|ssh-rsa,ecdsa-sha2-nistp256,ssh-ed25519|ssh-rsa,ecdsa-sha2-nistp256
CASES

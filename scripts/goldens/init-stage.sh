#!/usr/bin/env bash
# scripts/goldens/init-stage.sh — what upstream cloud-init's `init --local` and
# `init` leave in /var/lib/cloud over several boots of one disk, for
# pkg/stages' TestInstancifyGoldens and TestCloudConfigTextGoldens
# (lib/init-stage.py says how; it writes each case's boot-N/want/).
#
#   just goldens init-stage
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/init-stage.sh [--check] [DIR...]   # as root
#
# (default DIRs: pkg/stages/testdata/instancify and cloudconfigtxt). Runs in
# fresh UTS and network namespaces around scripts/upstream-cloudinit.sh's
# mount namespace, so nothing cloud-init does reaches this machine's
# hostname or network.
set -euo pipefail
. "$(dirname "$0")/lib/goldenlib.sh"
need_src init-stage
need_root init-stage "fresh UTS and network namespaces around scripts/upstream-cloudinit.sh"
cd "$repo"
exec unshare -u -n -- "$repo/scripts/upstream-cloudinit.sh" --python "$goldens/lib/init-stage.py" "$@"

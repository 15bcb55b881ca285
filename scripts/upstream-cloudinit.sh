#!/usr/bin/env bash
# upstream-cloudinit.sh — run upstream cloud-init from a source checkout,
# the way cloudroot's goldens are produced, without touching this machine.
#
#   CLOUDINIT_SRC=/path/to/cloud-init scripts/upstream-cloudinit.sh [cloud-init args...]
#   CLOUDINIT_SRC=... scripts/upstream-cloudinit.sh --python script.py [args...]
#
# CLOUDINIT_SRC is a checkout (or `git archive`) of canonical/cloud-init;
# the goldens in this repository were made from 26.x (the version each
# golden script records). The interpreter is Debian's /usr/bin/python3 with
# the dependencies Debian's cloud-init package pulls in (python3-yaml,
# -jinja2, -jsonschema, -jsonpatch, -configobj, -requests, -oauthlib,
# -netifaces, -serial); they are listed, with the apt-get line, when missing.
#
# The source is copied into a temporary directory (meson would generate
# cloudinit/meson_versions.py; we write it from the checkout's version), and
# cloud-init runs as root inside `unshare -m` with tmpfs over /run,
# /var/lib/cloud, /var/log and /etc/cloud, so even `schema` (which writes
# /run/cloud-init) or `init` leave nothing behind. Without root it runs
# unconfined only for --python (pure parser calls) and refuses otherwise.
# /etc/cloud inside gets a cloud.cfg with `datasource_list: [None]`, so
# nothing ever probes a cloud.
set -euo pipefail

src=${CLOUDINIT_SRC:-}
if [[ -z $src || ! -f $src/cloudinit/version.py ]]; then
	echo "upstream-cloudinit.sh: set CLOUDINIT_SRC to a canonical/cloud-init checkout (cloudinit/version.py not found in '${src}')" >&2
	exit 2
fi

py=/usr/bin/python3
missing=()
for m in yaml:python3-yaml jinja2:python3-jinja2 jsonschema:python3-jsonschema jsonpatch:python3-jsonpatch \
	configobj:python3-configobj requests:python3-requests oauthlib:python3-oauthlib netifaces:python3-netifaces serial:python3-serial; do
	"$py" -c "import ${m%%:*}" 2>/dev/null || missing+=("${m#*:}")
done
if ((${#missing[@]})); then
	echo "upstream-cloudinit.sh: missing Python modules; install with:" >&2
	echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 2
fi

# A prepared copy, cached per source tree (keyed by the path and the mtime
# of cloudinit/), so repeated calls cost only the interpreter start.
key=$(printf '%s %s' "$(cd "$src" && pwd)" "$(stat -c %Y "$src/cloudinit")" | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cloudroot/upstream-cloudinit/$key
if [[ ! -f $cache/.ready ]]; then
	rm -rf "$cache"
	mkdir -p "$cache"
	cp -a "$src/cloudinit" "$src/templates" "$cache/" 2>/dev/null || cp -a "$src/cloudinit" "$cache/"
	[[ -d $src/config ]] && cp -a "$src/config" "$cache/"
	[[ -d $src/tools ]] && cp -a "$src/tools" "$cache/"
	ver=${CLOUDINIT_VERSION:-}
	if [[ -z $ver ]]; then
		ver=$(git -C "$src" describe --tags 2>/dev/null || true)
	fi
	if [[ -z $ver ]]; then
		ver=$(sed -n 's/^version: *\x27\([^\x27]*\)\x27.*/\1/p; s/^ *version: *\x27\([^\x27]*\)\x27.*/\1/p' "$src/meson.build" 2>/dev/null | head -1)
	fi
	ver=${ver:-26.x}
	printf 'UPSTREAM_VERSION = "%s"\nDOWNSTREAM_VERSION = "@DOWNSTREAM_VERSION@"\n' "$ver" >"$cache/cloudinit/meson_versions.py"
	touch "$cache/.ready"
fi
export PYTHONPATH=$cache
export PYTHONDONTWRITEBYTECODE=1

# --pythonpath prints the prepared copy (scripts/bench-startup.sh runs
# cloud-init's processes from it inside its own namespace).
if [[ ${1:-} == --pythonpath ]]; then
	echo "$cache"
	exit 0
fi

if [[ ${1:-} == --version-of-source ]]; then
	exec "$py" -c 'from cloudinit import version; print(version.version_string())'
fi

if [[ ${1:-} == --python ]]; then
	shift
	if [[ $(id -u) -ne 0 ]]; then
		exec "$py" "$@"
	fi
	set -- "$py" "$@"
else
	if [[ $(id -u) -ne 0 ]]; then
		echo "upstream-cloudinit.sh: running cloud-init's CLI needs root (for unshare -m and the tmpfs mounts that keep it off this machine)" >&2
		exit 2
	fi
	set -- "$py" -m cloudinit.cmd.main "$@"
fi

# Inside a private mount namespace: tmpfs over every place cloud-init writes.
# Files the caller wants cloud-init to see are passed by path (e.g. under
# /tmp, which stays shared) or copied in with UPSTREAM_SETUP, a shell
# snippet run inside the namespace before cloud-init starts.
exec unshare -m --propagation private -- bash -c '
	set -e
	for d in /run /var/lib/cloud /var/log /etc/cloud; do
		mkdir -p "$d"
		mount -t tmpfs -o mode=0755 tmpfs "$d"
	done
	mkdir -p /etc/cloud/cloud.cfg.d /var/log
	printf "datasource_list: [None]\n" >/etc/cloud/cloud.cfg.d/99-cloudroot-none.cfg
	if [[ -n ${UPSTREAM_SETUP:-} ]]; then eval "$UPSTREAM_SETUP"; fi
	exec "$@"
' upstream-cloudinit "$@"

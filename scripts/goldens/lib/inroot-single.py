"""Run `cloud-init single --name M --frequency always --file F` in a
throwaway chroot of a Debian root, once per case of
pkg/cli/testdata/inroot-single, and record what it changed in the root, for
pkg/cli's TestInRootSingleUpstream.

  # upstream 26.x (the goldens; `just goldens inroot-single` runs this on
  # the cached cloud-init twin's root for inroot-single and inroot-nostate):
  CLOUDINIT_SRC=/path/to/cloud-init scripts/goldens/lib/inroot-single.py \
      ROOT pkg/cli/testdata/inroot-single pkg/modules/testdata/modgolden/os
  # cloudroot's agent in the same kind of root (the Go test does this):
  CLOUDINIT_SRC=... scripts/goldens/lib/inroot-single.py --agent build/cloudroot \
      ROOT pkg/cli/testdata/inroot-single pkg/modules/testdata/modgolden/os OUTDIR

ROOT is an extracted Debian 12 root with python3 and cloud-init's
dependencies: the cloud-init twin's (DEBIAN_IMAGE_VARIANT=cloud-init
scripts/debian-image.sh caches it as debian-12-cloud-init-*.tar.zst; extract
it with `tar -I zstd -xpf`). Upstream runs from CLOUDINIT_SRC (its
cloudinit/ on PYTHONPATH, its templates over /etc/cloud/templates), not the
root's own cloud-init package, with features.py patched as Debian's packaging
does for bookworm (APT_DEB822_SOURCE_LIST_FILE = False: one-line
sources.list); the agent sees the same 26.x templates in /etc/cloud/templates
(cloudroot prefers the target's templates to its own wording); the root's /etc/cloud/cloud.cfg is the
image's and both sides read it.

A case directory holds `distro` (an os-release name in the os dir, read by
goldenlib.cases: the root the case expects), `module` (--name) and
`config.yaml` (--file). Optional (pkg/cli/testdata/inroot-nostate):
`args`, the command line instead of `single --name M --frequency always
--file F` (then stdout, stderr and the listing of /var/lib/cloud and
/run/cloud-init are recorded too, with the times of log lines, the
welcome's version/date/uptime and Python tracebacks' frames masked: a
traceback is its exception line); `datasource.cfg`, replacing the
datasource_list [None] file; `setup.sh`, sourced in the namespace before
the command (R is the root). Without OUTDIR the result is written to the
case's `upstream.txt`; with it, to OUTDIR/<case>.txt.

Nothing reaches this machine: as root, each run is in its own mount,
network, UTS and PID namespace (`unshare -mnup`); the root is an overlay
whose upper layer is a temporary directory; /run, /var/lib/cloud and
/var/log inside are tmpfs; /proc is the namespace's; datasource_list is
[None] (a case's datasource.cfg replaces it); /dev/urandom and
/dev/console are empty regular files (what reaches the console is
recorded as that file's content, never the machine's console); the only network is
the namespace's loopback, where a recorder answers phone_home's POSTs on
127.0.0.1:18080. The hostname is "golden".

The record is what differs from the lower root afterwards: per path (sorted)
its type, mode and owner and, for a regular file, its content when it is
text of at most 16 KiB, its size and sha256 otherwise; deletions; the HTTP requests received; the exit code. Days
since the epoch in shadow files, password hashes that the config does not
spell out and the version and date of "# Created by cloud-init v. ..."
headers are masked, so the goldens do not depend on the day, a salt or the
build. Files the harness itself writes (the datasource_list file, an empty
/dev/urandom) and apt's caches are left out.
"""
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import goldenlib  # noqa: E402

HARNESS = {"/etc/cloud/cloud.cfg.d/99-golden-none.cfg", "/var/lib/cloud", "/var/lib", "/var", "/mnt", "/run", "/dev"}
# apt's caches: rebuilt by whatever apt command ran, with times inside.
CACHES = ("/var/cache/apt", "/var/lib/apt/lists")
TEXT_MAX = 16 * 1024

RECORDER = r'''
import http.server, sys
out = open(sys.argv[1], "ab")
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        out.write(b"%s %s\n%s: %s\n%s\n" % (self.command.encode(), self.path.encode(), b"Content-Type",
                  (self.headers.get("Content-Type") or "").encode(), body))
        out.flush()
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    do_PUT = do_POST
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", 18080), H).serve_forever()
'''

NS = r'''
set -e
R=$W/merged
mkdir -p $R $W/upper $W/work
mount -t overlay overlay -o lowerdir=$LOWER,upperdir=$W/upper,workdir=$W/work $R
mount -t proc proc $R/proc
for d in run var/lib/cloud var/log mnt; do mkdir -p $R/$d; mount -t tmpfs -o mode=0755 tmpfs $R/$d; done
mkdir -p $R/run/lock $R/mnt/case $R/mnt/bin
mount --bind -o ro $CASE $R/mnt/case
rm -f $R/dev/urandom $R/dev/console
: >$R/dev/urandom
: >$R/dev/console
if [ -f $CASE/datasource.cfg ]; then cp $CASE/datasource.cfg $R/etc/cloud/cloud.cfg.d/99-golden-none.cfg
else printf 'datasource_list: [None]\n' >$R/etc/cloud/cloud.cfg.d/99-golden-none.cfg; fi
# A case's setup.sh changes the root first (R is its path).
if [ -f $CASE/setup.sh ]; then . $CASE/setup.sh; fi
ARGS=${CASE_ARGS:-single --name "$MODULE" --frequency always --file /mnt/case/config.yaml}
hostname golden
ip link set lo up
python3 -c "$RECORDER" $W/requests &
for i in 1 2 3 4 5 6 7 8 9 10; do (exec 3<>/dev/tcp/127.0.0.1/18080) 2>/dev/null && break; sleep 0.2; done
set +e
if [ -n "$AGENT" ]; then
	cp $AGENT $R/mnt/bin/cloudroot
	mount --bind -o ro $SRC/templates $R/etc/cloud/templates
	chroot $R /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root \
		/mnt/bin/cloudroot $ARGS >$W/stdout 2>$W/stderr
else
	cp -a $SRC/cloudinit $R/mnt/cloudinit
	sed -i 's/^APT_DEB822_SOURCE_LIST_FILE = True$/APT_DEB822_SOURCE_LIST_FILE = False/' $R/mnt/cloudinit/features.py
	mount --bind -o ro $SRC/templates $R/etc/cloud/templates
	chroot $R /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root \
		PYTHONPATH=/mnt PYTHONDONTWRITEBYTECODE=1 \
		python3 -c 'import sys; from cloudinit.cmd.main import main; sys.exit(main())' $ARGS >$W/stdout 2>$W/stderr
fi
echo $? >$W/rc
cat $W/stdout $W/stderr
# What the command left under cloud-init's tmpfs directories.
(cd $R && find var/lib/cloud run/cloud-init -mindepth 1 -printf '%y %m %p\n' 2>/dev/null | sort) >$W/state
kill %1 2>/dev/null || true
'''


def mask(path, data, cfgtext):
    """Day counts in shadow files and hashes the config does not spell out."""
    if path in ("/etc/shadow", "/etc/shadow-"):
        lines = []
        for line in data.split("\n"):
            f = line.split(":")
            if len(f) > 2 and f[2]:
                f[2] = "DAYS"
            lines.append(":".join(f))
        data = "\n".join(lines)

    data = re.sub(r"(?m)^(# Created by cloud-init v\. )\S+ on .*$", r"\1VERSION on DATE", data)

    def hide(m):
        return m.group(0) if m.group(0) in cfgtext else m.group(1) + "SALT$HASH"

    return re.sub(r"(\$(?:1|5|6|y|2[aby])\$)[^:\s$]*\$[^:\s]*", hide, data)


def describe(lower, upper, cfgtext):
    """The entries of the upper layer that differ from the lower root."""
    out = []
    for dirpath, dirs, files in os.walk(upper):
        dirs.sort()
        for name in sorted(dirs + files):
            up = os.path.join(dirpath, name)
            rel = "/" + os.path.relpath(up, upper)
            if rel in HARNESS or any(rel.startswith(c + "/") for c in CACHES):
                continue
            low = os.path.join(lower, rel.lstrip("/"))
            st = os.lstat(up)
            if rel in ("/dev/urandom", "/dev/console") and st.st_size == 0:
                continue
            if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
                if os.path.lexists(low):
                    out.append("== %s deleted" % rel)
                continue
            lst = os.lstat(low) if os.path.lexists(low) else None
            head = "%04o %d:%d" % (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)
            same_meta = lst is not None and (lst.st_mode, lst.st_uid, lst.st_gid) == (st.st_mode, st.st_uid, st.st_gid)
            if stat.S_ISDIR(st.st_mode):
                if not same_meta:
                    out.append("== %s dir %s" % (rel, head))
            elif stat.S_ISLNK(st.st_mode):
                target = os.readlink(up)
                if not (lst and stat.S_ISLNK(lst.st_mode) and os.readlink(low) == target):
                    out.append("== %s symlink -> %s" % (rel, target))
            elif stat.S_ISREG(st.st_mode):
                with open(up, "rb") as f:
                    data = f.read()
                if same_meta and stat.S_ISREG(lst.st_mode):
                    with open(low, "rb") as f:
                        if f.read() == data:
                            continue
                out.append(file_entry(rel, "file " + head, data, cfgtext))
            else:
                out.append("== %s special %s" % (rel, head))
    return out


def file_entry(rel, head, data, cfgtext):
    try:
        text = data.decode("utf-8")
        if len(data) > TEXT_MAX or "\0" in text:
            raise ValueError
    except ValueError:
        return "== %s %s size %d sha256 %s" % (rel, head, len(data), hashlib.sha256(data).hexdigest())
    text = mask(rel, text, cfgtext)
    return "== %s %s\n%s%s" % (rel, head, text, "" if text.endswith("\n") or not text else "\n<no newline>\n")


def output(text):
    """A command's stdout or stderr without what changes from run to run:
    log lines keep their level and message (not the time or the file that
    logged), the welcome line loses its version, date and uptime, and a
    Python traceback is its last line (the exception) in the frame
    print_exc draws around it."""
    out, tb = [], False
    for line in text.splitlines():
        if tb:
            if line.startswith((" ", "\t")):
                continue
            tb = False
            # the exception, as the last line of the traceback
        elif line == "Traceback (most recent call last):":
            tb = True
            continue
        line = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [\w.]+\[(\w+)\]: ", r"LOG \1: ", line)
        line = re.sub(r"^Cloud-init v\. \S+ running '(\S+)' at .*\. Up [\d.]+ seconds\.$",
                      r"Cloud-init v. VERSION running '\1' at DATE. Up N seconds.", line)
        out.append(line)
    return "".join(line + "\n" for line in out)


def run_case(lower, cdir, module, agent, src):
    w = tempfile.mkdtemp(prefix="inroot-single.")
    try:
        env = dict(os.environ, W=w, LOWER=lower, CASE=cdir, MODULE=module, AGENT=agent or "", SRC=src or "",
                   RECORDER=RECORDER)
        args = os.path.join(cdir, "args")
        if os.path.exists(args):
            with open(args) as f:
                env["CASE_ARGS"] = f.read().strip()
        p = subprocess.run(["unshare", "-mnup", "--fork", "--propagation", "private", "bash", "-c", NS],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if os.environ.get("VERBOSE"):
            sys.stderr.write(p.stdout.decode("utf-8", "replace"))
        with open(os.path.join(cdir, "config.yaml")) as f:
            cfgtext = f.read()
        rc = open(os.path.join(w, "rc")).read().strip() if os.path.exists(os.path.join(w, "rc")) else "none"
        rec = ["rc: " + rc]
        rec += describe(lower, os.path.join(w, "upper"), cfgtext)
        if os.path.exists(os.path.join(w, "requests")):
            req = open(os.path.join(w, "requests"), "rb").read()
            if req:
                rec.append("== http requests\n" + req.decode("utf-8", "replace"))
        if "CASE_ARGS" in env:
            for name in ("stdout", "stderr", "state"):
                with open(os.path.join(w, name), "rb") as f:
                    text = f.read().decode("utf-8", "replace")
                rec.append("== %s\n%s" % (name, text if name == "state" else output(text)))
        return "\n".join(rec) + "\n", p.stdout.decode("utf-8", "replace")
    finally:
        subprocess.run(["rm", "-rf", "--one-file-system", w])


def main():
    args = sys.argv[1:]
    agent = None
    if args and args[0] == "--agent":
        agent = os.path.abspath(args[1])
        args = args[2:]
    if os.getuid() != 0:
        sys.exit("inroot-single.py: needs root (unshare, overlay and tmpfs mounts in a private namespace)")
    lower, cases, osdir = (os.path.abspath(a) for a in args[:3])
    outdir = os.path.abspath(args[3]) if len(args) > 3 else None
    # Both sides need its templates; upstream its code.
    src = os.environ.get("CLOUDINIT_SRC")
    if not src or not os.path.exists(os.path.join(src, "cloudinit", "version.py")):
        sys.exit("inroot-single.py: set CLOUDINIT_SRC to a canonical/cloud-init checkout")
    src = os.path.abspath(src)
    if not agent and not os.path.exists(os.path.join(src, "cloudinit", "meson_versions.py")):
        sys.exit("inroot-single.py: CLOUDINIT_SRC has no cloudinit/meson_versions.py: use the copy "
                 "scripts/upstream-cloudinit.sh prepares (its PYTHONPATH) or write one")
    only = set(os.environ.get("CASES", "").split())
    for case, cdir, osr, _name, _cfg, _systemd in goldenlib.cases(cases, osdir):
        if only and case not in only:
            continue
        with open(os.path.join(cdir, "module")) as f:
            module = f.read().strip()
        rec, log = run_case(lower, cdir, module, agent, src)
        dest = os.path.join(outdir, case + ".txt") if outdir else os.path.join(cdir, "upstream.txt")
        with open(dest, "w") as f:
            f.write(rec)
        if os.environ.get("VERBOSE"):
            sys.stderr.write("--- %s\n%s\n" % (case, log))


if __name__ == "__main__":
    main()

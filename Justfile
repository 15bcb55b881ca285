# cloudroot — build, boot and test. `just --list` shows every recipe.
# Without `just` installed: `npx --yes rust-just <recipe>`.

set shell := ["bash", "-euo", "pipefail", "-c"]

build := justfile_directory() / "build"
# The driver profile of `just initramfs` (initramfs/profiles/<profile>.txt).
profile := "minimal"
# How many QEMU boots of the integration suite run at once (`just qemu_parallel=1 test` for one).
qemu_parallel := env("CLOUDROOT_QEMU_PARALLEL", "2")
# The architecture `just demo` boots (amd64, arm64); `just demo arch=arm64` says the same.
arch := env("CLOUDROOT_ARCH", "amd64")
# Firmware the packed drivers declare is taken from here when present (Debian's firmware-* packages).
firmware := env("CLOUDROOT_FIRMWARE", "/lib/firmware")
export GOFLAGS := "-buildvcs=false"
export CGO_ENABLED := "0"

# Boot a QEMU VM from the example NoCloud seed and show what it provisioned.
# `just demo arch=arm64` (or `just arch=arm64 demo`) boots the arm64 build: Debian's arm64
# kernel under qemu-system-aarch64 -machine virt with UEFI firmware (AAVMF), TCG.
demo *opts: deps
    #!/usr/bin/env bash
    set -euo pipefail
    a={{arch}}
    for o in {{opts}}; do
        case $o in
        arch=*) a=${o#arch=} ;;
        *) echo "demo: unknown option $o (arch=amd64|arm64)" >&2; exit 2 ;;
        esac
    done
    case $a in
    amd64)
        {{just_executable()}} -f {{justfile()}} agent kernel initramfs rootfs
        go run ./cmds/cloudroot-lab demo -example examples/demo ;;
    arm64)
        {{just_executable()}} -f {{justfile()}} arm64
        CLOUDROOT_BUILD={{build}}/arm64 go run ./cmds/cloudroot-lab demo -example examples/demo ;;
    *) echo "demo: arch=$a: amd64 or arm64" >&2; exit 2 ;;
    esac

# The arm64 build in build/arm64/: agent, /init, Debian's linux-image-arm64 (dpkg's arm64
# architecture is added when missing, as root), the initramfs of `profile` and the busybox rootfs
# (busybox-static and e2fsprogs from Debian's arm64 packages).
arm64: deps
    mkdir -p {{build}}/arm64
    GOARCH=arm64 go build -tags cloudroot_front -trimpath -ldflags "-s -w" -o {{build}}/arm64/cloudroot ./cmds/cloudroot
    GOARCH=arm64 go build -trimpath -ldflags "-s -w" -o {{build}}/arm64/cloudroot-agent ./cmds/cloudroot-agent
    GOARCH=arm64 go build -trimpath -ldflags "-s -w" -o {{build}}/arm64/cloudroot-init ./cmds/cloudroot-init
    ARCH=arm64 BUILD_DIR={{build}}/arm64 bash scripts/kernel.sh
    go run ./cmds/cloudroot-mkinitramfs -kernel-modules {{build}}/arm64/kernel/modules -kernel-version "$(cat {{build}}/arm64/kernel/version)" -profile {{profile}} -firmware-dir {{firmware}} -init {{build}}/arm64/cloudroot-init -o {{build}}/arm64/initramfs.cpio.gz
    ARCH=arm64 AGENT={{build}}/arm64/cloudroot-agent FRONT={{build}}/arm64/cloudroot bash scripts/mkrootfs.sh {{build}}/arm64/rootfs.img

# Run every test: vet, unit tests, fuzz seeds, and the QEMU integration suite.
test: deps agent kernel initramfs (initramfs-profile "generic") rootfs debian-image (debian-image "suite=trixie") deb-lint arm64
    #!/usr/bin/env bash
    set -euo pipefail
    if [ -n "$(gofmt -l .)" ]; then gofmt -l . >&2; echo "gofmt: the files above need formatting" >&2; exit 1; fi
    go vet ./...
    go test -count=1 $(go list ./... | grep -v '/integration$')
    go test -count=1 -tags cloudroot_front ./cmds/cloudroot  # the front's own pkg/cli
    # QEMU suite: full output in build/integration.log, the summary here,
    # the whole log on failure. Every test is independent (its own disk copy,
    # seed, ports); `qemu_parallel` of them boot at once (one TCG vCPU each).
    rc=0
    t0=$(date +%s)
    CLOUDROOT_INTEGRATION=1 CLOUDROOT_BUILD={{build}} go test -count=1 -timeout 50m -parallel {{qemu_parallel}} -v ./integration/ > {{build}}/integration.log 2>&1 || rc=$?
    echo "QEMU suite: $(( $(date +%s) - t0 )) s, {{qemu_parallel}} boots at a time"  >> {{build}}/integration.log
    if [ "$rc" -ne 0 ]; then cat {{build}}/integration.log; else grep -E '^(=== RUN|--- |PASS|FAIL|ok|QEMU suite:)' {{build}}/integration.log; fi
    exit "$rc"

# Unit tests only (no QEMU, no root).
unit:
    go test $(go list ./... | grep -v '/integration$')

# Install the Debian packages the build and tests need (root), or say which are missing.
deps:
    bash scripts/deps.sh

# The agent and CLI (static): build/cloudroot-agent, the full agent (installed as
# /usr/lib/cloudroot/cloudroot-agent; the boot's units run it), and build/cloudroot, the front
# (/usr/bin/cloudroot and cloud-init): --version, status, query, schema and devel net-convert
# itself, the rest exec'd in the agent.
agent:
    mkdir -p {{build}}
    go build -trimpath -ldflags "-s -w" -o {{build}}/cloudroot-agent ./cmds/cloudroot-agent
    go build -tags cloudroot_front -trimpath -ldflags "-s -w" -o {{build}}/cloudroot ./cmds/cloudroot

# The initramfs /init: build/cloudroot-init (static).
init-bin:
    mkdir -p {{build}}
    go build -trimpath -ldflags "-s -w" -o {{build}}/cloudroot-init ./cmds/cloudroot-init

# The initramfs builder: build/cloudroot-mkinitramfs (static; the Debian package's kernel hooks run it).
mkinitramfs-bin:
    mkdir -p {{build}}
    go build -trimpath -ldflags "-s -w" -o {{build}}/cloudroot-mkinitramfs ./cmds/cloudroot-mkinitramfs

# The Debian package build/cloudroot_<version>_amd64.deb (pkg/debpkg: the agent, units, generator,
# cloud.cfg, the initramfs builder and /init, driver profiles, kernel hooks, maintainer scripts).
# `just deb arch=arm64`: build/arm64/cloudroot_<version>_arm64.deb, of GOARCH=arm64 binaries.
deb *opts: agent init-bin mkinitramfs-bin
    #!/usr/bin/env bash
    set -euo pipefail
    a=$({{just_executable()}} -f {{justfile()}} _arch {{opts}})
    b={{build}}
    if [ "$a" != amd64 ]; then
        b={{build}}/$a
        mkdir -p "$b"
        for c in cloudroot-agent cloudroot-init cloudroot-mkinitramfs; do
            GOARCH=$a go build -trimpath -ldflags "-s -w" -o "$b/$c" ./cmds/$c
        done
        GOARCH=$a go build -tags cloudroot_front -trimpath -ldflags "-s -w" -o "$b/cloudroot" ./cmds/cloudroot
    fi
    go run ./cmds/cloudroot-deb -arch "$a" -front "$b/cloudroot" -agent "$b/cloudroot-agent" -init "$b/cloudroot-init" -mkinitramfs "$b/cloudroot-mkinitramfs" -lists initramfs -date "$(git log -1 --format=%ct 2>/dev/null || date +%s)" -o "$b"

# The architecture named by `arch=` among opts, else the `arch` variable; amd64 or arm64.
[private]
_arch *opts:
    #!/usr/bin/env bash
    a={{arch}}
    for o in {{opts}}; do
        case $o in
        arch=*) a=${o#arch=} ;;
        suite=*) ;;
        *) echo "unknown option $o (arch=amd64|arm64, suite=bookworm|trixie)" >&2; exit 2 ;;
        esac
    done
    case $a in amd64 | arm64) echo "$a" ;; *) echo "arch=$a: amd64 or arm64" >&2; exit 2 ;; esac

# lintian on the package: fails on any error or warning but the tags docs/distributions.md explains
# (pkg/debpkg/lintian-suppress.txt).
# `just deb-lint arch=arm64`: the same for the arm64 package.
deb-lint *opts: (deb opts)
    #!/usr/bin/env bash
    set -euo pipefail
    a=$({{just_executable()}} -f {{justfile()}} _arch {{opts}})
    d={{build}}
    [ "$a" = amd64 ] || d={{build}}/$a
    lintian --fail-on error,warning --suppress-tags-from-file pkg/debpkg/lintian-suppress.txt "$d"/cloudroot_*_"$a".deb

# A Debian kernel and its modules in build/kernel/ (vmlinuz, vmlinux, modules).
kernel:
    bash scripts/kernel.sh

# cloudroot-init as /init plus the driver profile `profile` of initramfs/profiles (minimal,
# cloud, baremetal, generic): build/initramfs.cpio.gz for minimal (the test default),
# build/initramfs-<profile>.cpio.gz for the others. Another profile:
# `just profile=generic initramfs` or `just initramfs-profile generic`. (No positional
# parameter here, so `just agent kernel initramfs rootfs` keeps meaning four recipes.)
# Profiles other than minimal also carry Debian's lvm (roots on LVM) when the host has it (lvm2).
initramfs: (initramfs-profile profile)

# The initramfs of one driver profile: just initramfs-profile generic
initramfs-profile p: init-bin kernel
    go run ./cmds/cloudroot-mkinitramfs -kernel-modules {{build}}/kernel/modules -kernel-version "$(cat {{build}}/kernel/version)" -profile {{p}} -firmware-dir {{firmware}} $(if [ "{{p}}" != minimal ] && [ -x /usr/sbin/lvm ]; then echo -program /usr/sbin/lvm; fi) -init {{build}}/cloudroot-init -o {{build}}/initramfs{{ if p == "minimal" { "" } else { "-" + p } }}.cpio.gz

# build/rootfs.img: GPT disk, ext4 root labelled cloudimg-rootfs with busybox and the agent.
rootfs: agent
    AGENT={{build}}/cloudroot-agent FRONT={{build}}/cloudroot bash scripts/mkrootfs.sh

# build/debian-12.img: a Debian 12 + systemd image (debootstrap, cached outside the clone) with cloudroot installed.
# `just debian-image arch=arm64`: build/arm64/debian-12.img, Debian's arm64 packages (their maintainer
# scripts run through qemu-user: the Debian package qemu-user-static), GRUB arm64-efi, UEFI only.
# It installs cloudroot through its Debian package (just deb) and boots by itself under BIOS and UEFI:
# GRUB, the cloudroot initrd of its kernel (profile `profile`), no -kernel needed.
# `just debian-image suite=trixie`: build/debian-13.img, Debian 13 with netplan + systemd-networkd
# and trixie's own kernel (docs/distributions.md).
debian-image *opts: (deb opts)
    #!/usr/bin/env bash
    set -euo pipefail
    a=$({{just_executable()}} -f {{justfile()}} _arch {{opts}})
    suite=bookworm
    for o in {{opts}}; do
        case $o in suite=*) suite=${o#suite=} ;; esac
    done
    if [ "$a" = amd64 ]; then
        {{just_executable()}} -f {{justfile()}} kernel
        DEB={{build}}/"$(cd {{build}} && ls -t cloudroot_*_amd64.deb | head -n 1)" DEBIAN_IMAGE_SUITE=$suite DEBIAN_IMAGE_PROFILE={{profile}} bash scripts/debian-image.sh
    else
        [ "$suite" = bookworm ] || { echo "debian-image: arch=$a is built for bookworm only (suite=$suite)" >&2; exit 2; }
        {{just_executable()}} -f {{justfile()}} arm64
        b={{build}}/$a
        ARCH=$a BUILD_DIR="$b" DEB="$b/$(cd "$b" && ls -t cloudroot_*_"$a".deb | head -n 1)" DEBIAN_IMAGE_PROFILE={{profile}} bash scripts/debian-image.sh
    fi

# Not part of `just test` (an arm64 Debian boot under TCG takes minutes): TestDebianArm64 boots the
# arm64 Debian image alone under qemu-system-aarch64 with AAVMF and a NoCloud seed, checks the
# instance and prints the stage timings and QEMU-start to power-off.
debian-arm64: (debian-image "arch=arm64")
    CLOUDROOT_INTEGRATION=1 CLOUDROOT_ARM64_DEBIAN=1 CLOUDROOT_BUILD={{build}} go test -count=1 -timeout 30m -v -run '^TestDebianArm64$' ./integration/

# Not part of `just test` (three Debian boots under TCG): TestDebianLifecycle rebuilds the initrd with
# cloudroot's update-initramfs and the dpkg trigger, reinstalls GRUB's packages (grub-cloud-amd64 re-runs
# grub-install for BIOS and UEFI), boots OVMF through the new shim, removes cloudroot (initramfs-tools
# back from a local apt repository) and boots SeaBIOS with initramfs-tools' initrd. Each guest step
# is on the console as `cloudroot-test: STEP: rc=N`.
debian-lifecycle: debian-image
    CLOUDROOT_INTEGRATION=1 CLOUDROOT_DEBIAN_LIFECYCLE=1 CLOUDROOT_BUILD={{build}} go test -count=1 -timeout 100m -v -run '^TestDebianLifecycle$' ./integration/

# Boot the Debian image, its cloud-init twin (Debian's cloud-init package instead of cloudroot) and its
# bare twin (neither: the seed's end state baked in, harness.BareTwinScript) in N interleaved rounds;
# one table of medians and the ratios to the bare twin.
# `just bench-vs-cloud-init 3 suite=trixie`: the Debian 13 set.
bench-vs-cloud-init runs="3" *opts: deps agent kernel initramfs rootfs
    #!/usr/bin/env bash
    set -euo pipefail
    suite=bookworm runs={{runs}}
    for o in {{opts}}; do
        case $o in
        suite=*) suite=${o#suite=} ;;
        *) echo "bench-vs-cloud-init: unknown option $o (suite=bookworm|trixie)" >&2; exit 2 ;;
        esac
    done
    case $runs in suite=*) suite=${runs#suite=}; runs=3 ;; esac
    case $suite in bookworm) rel=12 ;; trixie) rel=13 ;; *) echo "bench-vs-cloud-init: suite=$suite: want bookworm or trixie" >&2; exit 2 ;; esac
    {{just_executable()}} -f {{justfile()}} debian-image suite=$suite
    DEBIAN_IMAGE_SUITE=$suite DEBIAN_IMAGE_VARIANT=cloud-init bash scripts/debian-image.sh
    CLOUDROOT_BARE_BAKE={{build}}/debian-$rel-bare.bake.sh CLOUDROOT_DEBIAN_SUITE=$suite go test -count=1 -run TestWriteBareTwinBake ./integration/
    DEBIAN_IMAGE_SUITE=$suite DEBIAN_IMAGE_VARIANT=bare DEBIAN_IMAGE_BAKE={{build}}/debian-$rel-bare.bake.sh bash scripts/debian-image.sh
    CLOUDROOT_INTEGRATION=1 CLOUDROOT_BUILD={{build}} CLOUDROOT_BENCH=$runs CLOUDROOT_DEBIAN_SUITE=$suite go test -count=1 -timeout 120m -v -run TestBenchDebianVsCloudInit ./integration/

# Boot the Debian 12 image and its cloud-init twin once each with one seed and diff their end states
# (users, keys, sudoers, files, network, /var/lib/cloud, status) against integration/testdata/endstate-allowlist.json.
# `just endstate suite=trixie`: the Debian 13 pair, against integration/testdata/endstate-allowlist-trixie.json.
endstate *opts: deps agent kernel initramfs rootfs
    #!/usr/bin/env bash
    set -euo pipefail
    suite=bookworm
    for o in {{opts}}; do
        case $o in
        suite=*) suite=${o#suite=} ;;
        *) echo "endstate: unknown option $o (suite=bookworm|trixie)" >&2; exit 2 ;;
        esac
    done
    {{just_executable()}} -f {{justfile()}} debian-image suite=$suite
    DEBIAN_IMAGE_SUITE=$suite DEBIAN_IMAGE_VARIANT=cloud-init bash scripts/debian-image.sh
    CLOUDROOT_INTEGRATION=1 CLOUDROOT_BUILD={{build}} CLOUDROOT_DEBIAN_SUITE=$suite go test -count=1 -timeout 40m -v -run TestDebianEndStateVsCloudInit ./integration/

# Power-cut campaign: N first boots of the busybox image killed (SIGKILL of QEMU) at a random
# console line, each followed by an undisturbed boot that must reach the provisioned state
# (integration/chaos_test.go). The seed is printed; CLOUDROOT_CHAOS_SEED=<seed> replays it.
# P runs boot at a time (independent VMs; default 2). Full output in build/chaos.log.
# `just test` runs it with N=3.
chaos runs="3" parallel="2": deps agent kernel initramfs rootfs
    #!/usr/bin/env bash
    set -euo pipefail
    rc=0
    CLOUDROOT_INTEGRATION=1 CLOUDROOT_BUILD={{build}} CLOUDROOT_CHAOS={{runs}} go test -count=1 -timeout 1000m -parallel {{parallel}} -v -run '^TestChaos$' ./integration/ > {{build}}/chaos.log 2>&1 || rc=$?
    grep -E '^(=== RUN|\s*--- |PASS|FAIL|ok)|chaos: |chaos_test.go:[0-9]+: (cut|runcmd)' {{build}}/chaos.log || true
    exit "$rc"

# A NoCloud seed ISO from a directory: just seed examples/demo build/seed.iso
seed dir="examples/demo" out=(build / "seed.iso"):
    bash scripts/mkseed.sh {{dir}} {{out}} iso

# Network-boot the demo seed: live (squashfs root in RAM) or disk (image to an empty disk).
demo-pxe mode="live": deps agent kernel initramfs rootfs
    go run ./cmds/cloudroot-lab pxe -example examples/demo -mode {{mode}}

# Boot the demo VM several times and print the median of every stage.
bench-boot runs="5": deps agent kernel initramfs rootfs
    go run ./cmds/cloudroot-lab bench -example examples/demo -runs {{runs}}

# Run every fuzz target of the repository for `time` each, one after the other
# (targets are found with `go test -list`, so new ones join by themselves). A crash
# stops the run; its input is in the package's testdata/fuzz/<Target>/ and becomes
# a regression seed once committed. `pkg` narrows it: just fuzz 30s ./pkg/disk/...
# Minimising a new input is capped at 100 runs: the image targets (pkg/media) take
# inputs of hundreds of KiB, whose default 60 s minimisation ate the whole budget.
fuzz time="30s" pkg="./...":
    #!/usr/bin/env bash
    set -euo pipefail
    n=0
    for p in $(go list -f '{{"{{"}}if or .TestGoFiles .XTestGoFiles{{"}}"}}{{"{{"}}.ImportPath{{"}}"}}{{"{{"}}end{{"}}"}}' {{pkg}}); do
        for t in $(go test -list '^Fuzz' "$p" | grep '^Fuzz' || true); do
            echo "== $p $t ({{time}})"
            go test -run='^$' -fuzz="^$t\$" -fuzztime={{time}} -fuzzminimizetime=100x "$p"
            n=$((n+1))
        done
    done
    echo "fuzz: $n targets, {{time}} each, no failure"

# The fleet test: `instances` simulated instances, `concurrency` booting at once, run the real
# Ec2, OpenStack and NoCloud-net datasource code from their own 127.0.x.y against one faulty metadata
# server (`imds serve --per-client --faults`, a FileServer for NoCloud); prints p50/p99
# provisioning time and requests per instance (docs/performance.md, "Fleet scale").
fleet instances="1000" concurrency="100" faults="errors=0.1,spikes=0.05,spike=300ms,seed=1":
    @echo "fleet on $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), load $(cut -d' ' -f1-3 /proc/loadavg)"
    CLOUDROOT_FLEET_INSTANCES={{instances}} CLOUDROOT_FLEET_CONCURRENCY={{concurrency}} CLOUDROOT_FLEET_FAULTS={{faults}} go test -count=1 -timeout 10m -run '^TestFleet' -v ./pkg/imdsserve/ | grep -E '^(--- |PASS|FAIL|ok)|fleet_test'

# Start-up of the agent's commands as whole processes: median CPU and wall
# ms, peak RSS (docs/performance.md). With CLOUDINIT_SRC set (as root),
# upstream cloud-init's figures for the same commands beside.
bench-startup runs="11": agent init-bin
    BENCH_RUNS={{runs}} bash scripts/bench-startup.sh {{build}}

# Generators are scripts/goldens/AREA.py or .sh (`all`: every one), run on
# upstream cloud-init 26.2 (CLOUDINIT_SRC, or the tag 26.2 of the git clone
# CLOUDINIT_MIRROR, unpacked once into the cache) through scripts/upstream-cloudinit.sh; review with git diff.
# One library, scripts/goldens/lib/goldenlib.py (.sh for the shell areas), says how an area is laid out.
# Areas: analyze apk-configure apt-configure authkey-fingerprints ca-certs cli cli-args cloudcfg cm distro
# ds ds-identify examples init-stage inroot-single keyboard keys-to-console cc-locale module-activation
# module-meta module-single netconfig ntp ntp-template packages phone-home pyjson resolv-conf rsyslog
# schema-corpus seed-random set-passwords timezone vendor write-files-source yaml-dump yaml11
# yum-add-repo zypper-add-repo (docs/compatibility.md, "Goldens from upstream", lists what each writes).
# Regenerate an area's upstream goldens (`just goldens ds`, `just goldens all`).
goldens area="all":
    #!/usr/bin/env bash
    set -euo pipefail
    src=${CLOUDINIT_SRC:-}
    if [[ -z $src ]]; then
        src=${XDG_CACHE_HOME:-$HOME/.cache}/cloudroot/cloud-init-26.2
        if [[ ! -f $src/cloudinit/version.py ]]; then
            [[ -n ${CLOUDINIT_MIRROR:-} ]] || { echo "goldens: set CLOUDINIT_SRC (an unpacked cloud-init 26.2) or CLOUDINIT_MIRROR (a git clone of canonical/cloud-init with tag 26.2)" >&2; exit 2; }
            mkdir -p "$src"
            git -C "$CLOUDINIT_MIRROR" archive refs/tags/26.2 | tar -x -C "$src"
        fi
    fi
    cd {{justfile_directory()}}
    export PYTHONHASHSEED=0  # set order: the same bytes on every run (scripts/goldens/lib/goldenlib.py)
    if [[ {{area}} == all ]]; then gens=(scripts/goldens/*.py scripts/goldens/*.sh); else gens=(scripts/goldens/{{area}}.py scripts/goldens/{{area}}.sh); fi
    ran=0
    for g in "${gens[@]}"; do
        [[ -f $g ]] || continue
        echo "goldens: $g" >&2
        if [[ $g == *.py ]]; then CLOUDINIT_SRC=$src scripts/upstream-cloudinit.sh --python "$g"; else CLOUDINIT_SRC=$src bash "$g"; fi
        ran=$((ran+1))
    done
    [[ $ran -gt 0 ]] || { echo "goldens: no generator for '{{area}}' under scripts/goldens/" >&2; exit 2; }

# cloudroot's `single` (and `clean`) in a throwaway chroot of the cloud-init twin's Debian 12 root (the
# newest cached debian-12-cloud-init-*.tar.zst, extracted into a temp dir) against 26.2's records in
# pkg/cli/testdata/inroot-single and inroot-nostate. Needs root (unshare, overlay, tmpfs in a private
# namespace). 26.2 is CLOUDINIT_SRC, or the cache's cloud-init-26.2 (unpacked from CLOUDINIT_MIRROR).
# Run TestInRootSingleUpstream against the cached cloud-init twin's root.
inroot-goldens:
    #!/usr/bin/env bash
    set -euo pipefail
    [[ $(id -u) -eq 0 ]] || { echo "inroot-goldens: needs root (unshare, overlay and tmpfs mounts in a private namespace); run it as root" >&2; exit 2; }
    cache=${CLOUDROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cloudroot}
    tarball=$(ls -t "$cache"/debian-12-cloud-init-*.tar.zst 2>/dev/null | head -n 1 || true)
    [[ -n $tarball ]] || { echo "inroot-goldens: no $cache/debian-12-cloud-init-*.tar.zst (DEBIAN_IMAGE_VARIANT=cloud-init scripts/debian-image.sh builds it, as just bench-vs-cloud-init does)" >&2; exit 2; }
    src=${CLOUDINIT_SRC:-$cache/cloud-init-26.2}
    if [[ ! -f $src/cloudinit/version.py ]]; then
        [[ -n ${CLOUDINIT_MIRROR:-} ]] || { echo "inroot-goldens: set CLOUDINIT_SRC (an unpacked cloud-init 26.2) or CLOUDINIT_MIRROR (a git clone of canonical/cloud-init with tag 26.2)" >&2; exit 2; }
        mkdir -p "$src"
        git -C "$CLOUDINIT_MIRROR" archive refs/tags/26.2 | tar -x -C "$src"
    fi
    root=$(mktemp -d "${TMPDIR:-/tmp}/inroot-goldens.XXXXXX")
    trap 'rm -rf --one-file-system "$root"' EXIT
    echo "inroot-goldens: $tarball into $root; 26.2 from $src" >&2
    tar -I zstd -xpf "$tarball" -C "$root"
    cd {{justfile_directory()}}
    CLOUDROOT_DEBIAN_ROOT=$root CLOUDINIT_SRC=$src go test -count=1 -timeout 30m -v -run '^TestInRootSingleUpstream$' ./pkg/cli/

# Go benchmarks of the hot paths.
bench:
    go test -run '^$' -bench . -benchmem ./pkg/...

# Remove build outputs (downloads stay in ~/.cache/cloudroot, outside the clone).
clean:
    rm -rf {{build}}/kernel {{build}}/*.img {{build}}/*.iso {{build}}/*.gz {{build}}/cloudroot {{build}}/cloudroot-agent {{build}}/cloudroot-init

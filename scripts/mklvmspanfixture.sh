#!/usr/bin/env bash
# Writes integration/testdata/lvm-span-head{0,1}.bin.gz: the first MiB of
# each of two 200 MiB disks that Debian's LVM tools (lvm2) made physical
# volumes of one volume group "vg1" (4 MiB extents, data from 1 MiB on
# each). Logical volume "root" is linear across both: extents 0-39 of the
# first disk (160 MiB) then extents 0-29 of the second (120 MiB), 280 MiB
# in all; "spare" is extents 30-31 of the second disk. integration's
# TestRootLVMSpan writes a root filesystem across the two and boots with
# rd.lvm.lv=vg1/root, which must activate root and not spare.
# Needs root, losetup and lvm2; the host's own disks are filtered out.
set -euo pipefail
out0=${1:-integration/testdata/lvm-span-head0.bin.gz}
out1=${2:-integration/testdata/lvm-span-head1.bin.gz}
img0=$(mktemp) img1=$(mktemp) meta=$(mktemp)
truncate -s 200M "$img0" "$img1"
loop0=$(losetup -f --show "$img0")
trap 'losetup -d "$loop0" 2>/dev/null || true; rm -f "$img0" "$img1" "$meta"' EXIT
loop1=$(losetup -f --show "$img1")
trap 'losetup -d "$loop0" "$loop1" 2>/dev/null || true; rm -f "$img0" "$img1" "$meta"' EXIT
cfg="devices { filter = [ \"a|^${loop0}\$|\", \"a|^${loop1}\$|\", \"r|.*|\" ] scan = [ \"/dev\" ] } global { use_lvmlockd = 0 } activation { udev_sync = 0 udev_rules = 0 }"
# lvcreate needs device-mapper in the running kernel; the logical volumes
# are added to the backed-up metadata instead and restored (no kernel needed).
lvm pvcreate --config "$cfg" -q --dataalignment 1m "$loop0" "$loop1"
lvm vgcreate --config "$cfg" -q -s 4m vg1 "$loop0" "$loop1"
lvm vgcfgbackup --config "$cfg" -q -f "$meta" vg1
python3 - "$meta" "$loop0" "$loop1" <<'PY'
import re, sys
p, dev0, dev1 = sys.argv[1:]
s = open(p).read()
# The metadata names PVs pv0, pv1 in the order vgcreate got them; check.
pvs = re.findall(r'\n\t\t(pv\d+) \{\n\t\t\tid = "[^"]*"\n\t\t\tdevice = "([^"]*)"', s)
names = {dev: pv for pv, dev in pvs}
a, b = names[dev0], names[dev1]
lv = """
	logical_volumes {

		root {
			id = "cLdRoT-0000-0000-0000-0000-0000-000002"
			status = ["READ", "WRITE", "VISIBLE"]
			flags = []
			creation_time = 0
			creation_host = "cloudroot"
			segment_count = 2

			segment1 {
				start_extent = 0
				extent_count = 40

				type = "striped"
				stripe_count = 1

				stripes = [
					"%(a)s", 0
				]
			}
			segment2 {
				start_extent = 40
				extent_count = 30

				type = "striped"
				stripe_count = 1

				stripes = [
					"%(b)s", 0
				]
			}
		}

		spare {
			id = "cLdSpR-0000-0000-0000-0000-0000-000003"
			status = ["READ", "WRITE", "VISIBLE"]
			flags = []
			creation_time = 0
			creation_host = "cloudroot"
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 2

				type = "striped"
				stripe_count = 1

				stripes = [
					"%(b)s", 30
				]
			}
		}
	}
""" % {"a": a, "b": b}
i = s.rindex("}")  # closes the volume group
open(p, "w").write(s[:i] + lv + s[i:])
PY
lvm vgcfgrestore --config "$cfg" -q -f "$meta" vg1
lvm pvs --config "$cfg" --noheadings --units b -o pv_name,pe_start,pv_size,vg_name
lvm lvs --config "$cfg" --noheadings -o lv_name,seg_pe_ranges,lv_size
head -c 1048576 "$loop0" | gzip -9n > "$out0"
head -c 1048576 "$loop1" | gzip -9n > "$out1"
echo "wrote $out0 $out1"

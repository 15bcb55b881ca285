#!/usr/bin/env bash
# Writes integration/testdata/lvm-head.bin.gz: the first MiB of a disk that
# Debian's LVM tools (lvm2) made a physical volume of, with volume group
# "vg0" and logical volume "root" (the volume's data starts at 1 MiB, the
# PV's pe_start). integration's TestRootLVM puts a root filesystem after it.
# Needs root, losetup and lvm2; the host's own disks are filtered out.
set -euo pipefail
out=${1:-integration/testdata/lvm-head.bin.gz}
img=$(mktemp)
truncate -s 300M "$img"
loop=$(losetup -f --show "$img")
cfg="devices { filter = [ \"a|^${loop}\$|\", \"r|.*|\" ] scan = [ \"/dev\" ] } global { use_lvmlockd = 0 } activation { udev_sync = 0 udev_rules = 0 }"
meta=$(mktemp)
trap 'rm -f "$img" "$meta"; losetup -d "$loop" 2>/dev/null || true' EXIT
# lvcreate needs device-mapper in the running kernel; the logical volume is
# added to the backed-up metadata instead and restored (no kernel needed).
lvm pvcreate --config "$cfg" -q --dataalignment 1m "$loop"
lvm vgcreate --config "$cfg" -q -s 4m vg0 "$loop"
lvm vgcfgbackup --config "$cfg" -q -f "$meta" vg0
python3 - "$meta" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
lv = """
	logical_volumes {

		root {
			id = "cLdRoT-0000-0000-0000-0000-0000-000001"
			status = ["READ", "WRITE", "VISIBLE"]
			flags = []
			creation_time = 0
			creation_host = "cloudroot"
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 70

				type = "striped"
				stripe_count = 1

				stripes = [
					"pv0", 0
				]
			}
		}
	}
"""
i = s.rindex("}")  # closes the volume group
open(p, "w").write(s[:i] + lv + s[i:])
PY
lvm vgcfgrestore --config "$cfg" -q -f "$meta" vg0
lvm pvs --config "$cfg" --noheadings --units b -o pv_name,pe_start,vg_name
lvm lvs --config "$cfg" --noheadings -o lv_name,seg_pe_ranges,lv_size
head -c 1048576 "$loop" | gzip -9n > "$out"
echo "wrote $out"

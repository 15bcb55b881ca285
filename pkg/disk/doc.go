// Package disk grows, partitions, formats and mounts disks for cloudroot:
// cloud-init's growpart, resizefs, disk_setup/fs_setup and mounts, on block
// devices and on plain image files alike.
//
// The pieces and their contracts:
//
//   - Grow (grow.go) is cloud-utils' growpart: it moves the end of one
//     partition to the start of the next partition or the end of the usable
//     space, never moves a start, writes nothing when it reports no change
//     or runs dry, and rewrites only the bytes it must (one MBR slot; or the
//     GPT entry, both headers and the backup entry array, with every CRC
//     recomputed). GPT and MBR are encoded here, not with go-diskfs: see
//     gpt.go for why.
//   - Resizers (resizefs.go) map a filesystem type to the command that grows
//     it online; commands run through a Runner (target.Root), so the tool
//     comes from the target and tests fake it.
//   - The fstab renderer (fstab.go) is pure: cloud-init's cc_mounts rules on
//     an fstab's text, the config and a device lookup.
//   - The disk_setup/fs_setup planner (setup.go) is pure and refuses to
//     touch a disk that holds a table or a filesystem unless overwrite or
//     replace_fs say so; Apply (setup_apply.go) carries a plan out.
//
// Nothing here reads the host's / or /proc directly except through paths a
// caller can replace.
package disk

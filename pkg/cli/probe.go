//go:build !cloudroot_front

package cli

// `cloudroot probe --datasource NAME [--metadata-url URL]... [--seed PATH]
// [--timeout D] [--root DIR]`
//
// The contract, a debugging tool with no cloud-init counterpart:
//
//   - Runs one datasource of builtin.Registry() (NAME matched
//     case-insensitively) once, as the network stage would: Env.NetworkUp
//     is true and Env.HTTP a client without proxies. Nothing is written.
//   - The system is read under --root (default the Env's root, "/"): the
//     target root filesystem, DMI from sys/class/dmi/id, the kernel command
//     line from proc/cmdline, block devices from sys and dev, the distro from
//     etc/os-release, uname from proc/sys/kernel.
//   - --metadata-url (repeatable) replaces the source's base URLs, through
//     Env.Config `datasource: {NAME: {metadata_urls: [URL...]}}`: point it
//     at `cloudroot imds serve`.
//   - --seed PATH replaces the root, the command line and the devices: a
//     directory holding meta-data or user-data is the NoCloud seed
//     directory (/var/lib/cloud/seed/nocloud), one holding openstack/ or
//     ec2/ the ConfigDrive one (/var/lib/cloud/seed/config_drive), any
//     other directory the root; a file (an image such as `cloudroot seed
//     make` writes) is the only block device, its filesystem probed.
//   - --dmi FIELD=VALUE (repeatable) replaces one DMI field, so a source
//     that checks its platform (Azure's chassis asset tag, Oracle's, ...)
//     can be pointed at a simulator from any machine.
//   - Timing is the boot's metadata policy (Env.Policy, imds.Policy):
//     the defaults with the cloudroot.ds-* keys of the command line read
//     (datasource.CmdlinePolicy), as the initramfs's search has it;
//     --timeout, when given, is its Deadline, which bounds the whole run
//     (imds.ErrDeadline).
//   - stdout: the instance data found as JSON, shaped like
//     instance-data-sensitive.json (v1 keys, ds.meta_data, sys_info...),
//     plus `userdata` and `vendordata` as text (base64, and named in
//     base64_encoded_keys, when not UTF-8) and `network_config` as the
//     source gave it. stderr: why nothing was found.
//   - exit: 0 found, 1 not found or failed, 2 bad arguments.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/builtin"
	"github.com/cloudroot/cloudroot/pkg/datasource/configdrive"
	"github.com/cloudroot/cloudroot/pkg/datasource/nocloud"
	"github.com/cloudroot/cloudroot/pkg/datasource/vmware"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/identify"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/stages"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func probeCommand() Command {
	return Command{
		Name:  "probe",
		Short: "Run one datasource and print the instance data it finds (probe --datasource NAME [--metadata-url URL] [--seed DIR]).",
		Run:   runProbe,
	}
}

const probeUsage = "usage: cloudroot probe [-h] --datasource NAME [--metadata-url URL]... [--dmi FIELD=VALUE]... [--seed PATH] [--timeout D] [--root DIR]\n"

type probeOptions struct {
	source  datasource.Source
	urls    []string
	dmi     map[string]string
	seed    string
	timeout time.Duration
	root    string
}

func parseProbeArgs(env *Env, args []string) (probeOptions, int, bool) {
	root := env.Root
	if root == "" {
		root = "/"
	}
	opts := probeOptions{root: root}
	reg := builtin.Registry()
	var name string
	fl := flag.NewFlagSet("probe", flag.ContinueOnError)
	fl.SetOutput(env.Stderr)
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), probeUsage+"\nRun one datasource and print the instance data it finds as JSON.\nDatasources: "+strings.Join(reg.Names(), ", ")+"\n\noptions:\n")
		fl.PrintDefaults()
	}
	fl.StringVar(&name, "datasource", "", "the datasource to run (`NAME`, e.g. Ec2, NoCloud)")
	fl.Func("metadata-url", "a base `URL` replacing the datasource's defaults (repeatable)", func(s string) error {
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("not an http(s) URL: %q", s)
		}
		opts.urls = append(opts.urls, s)
		return nil
	})
	fl.Func("dmi", "a DMI `FIELD=VALUE` replacing the system's (sys_vendor, product_name, product_serial, product_uuid, product_version, chassis_asset_tag, board_vendor, board_name; repeatable): makes a simulator look like its cloud", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || dmiField(&bootenv.DMI{}, k) == nil {
			return fmt.Errorf("want FIELD=VALUE with FIELD one of %s, got %q", strings.Join(dmiFields, ", "), s)
		}
		if opts.dmi == nil {
			opts.dmi = map[string]string{}
		}
		opts.dmi[k] = v
		return nil
	})
	fl.StringVar(&opts.seed, "seed", "", "a seed directory, root directory or seed image (`PATH`) replacing the system's")
	fl.DurationVar(&opts.timeout, "timeout", 0, "the deadline of the whole probe (`D`, e.g. 5s; 0: the policy's, cloudroot.ds-deadline= or 2m)")
	fl.StringVar(&opts.root, "root", opts.root, "the system root `DIR`")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fl.SetOutput(env.Stdout)
			fl.Usage()
			return opts, 0, false
		}
		return opts, 2, false
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "%serror: unrecognized arguments: %s\n", probeUsage, strings.Join(fl.Args(), " "))
		return opts, 2, false
	}
	if name == "" {
		fmt.Fprintf(env.Stderr, "%serror: --datasource is required (one of %s)\n", probeUsage, strings.Join(reg.Names(), ", "))
		return opts, 2, false
	}
	src, ok := reg.Lookup(name)
	if !ok {
		fmt.Fprintf(env.Stderr, "error: unknown datasource %q (choose from %s)\n", name, strings.Join(reg.Names(), ", "))
		return opts, 2, false
	}
	if v, ok := src.(*vmware.Source); ok {
		// Probing only looks: never redact the guest's guestinfo keys.
		ro := *v
		ro.ReadOnly = true
		src = &ro
	}
	opts.source = src
	if opts.timeout < 0 {
		fmt.Fprintln(env.Stderr, "error: --timeout must not be negative")
		return opts, 2, false
	}
	if opts.seed != "" {
		if _, err := os.Stat(opts.seed); err != nil {
			fmt.Fprintf(env.Stderr, "error: --seed: %v\n", err)
			return opts, 2, false
		}
	}
	return opts, 0, true
}

func runProbe(ctx context.Context, env *Env, args []string) int {
	opts, code, ok := parseProbeArgs(env, args)
	if !ok {
		return code
	}
	denv, err := probeEnv(env, opts)
	if err != nil {
		fmt.Fprintf(env.Stderr, "error: %v\n", err)
		return 1
	}
	name := opts.source.Name()
	start := time.Now()
	ctx, cancel := context.WithTimeoutCause(ctx, denv.Policy.Deadline, imds.ErrDeadline)
	defer cancel()
	d, err := opts.source.Get(ctx, denv)
	if err != nil && errors.Is(context.Cause(ctx), imds.ErrDeadline) {
		err = fmt.Errorf("%w (%s): %w", imds.ErrDeadline, denv.Policy.Deadline, err)
	}
	if err != nil {
		if errors.Is(err, datasource.ErrNotFound) {
			fmt.Fprintf(env.Stderr, "%s: not found: %v\n", name, err)
		} else {
			fmt.Fprintf(env.Stderr, "%s: failed: %v\n", name, err)
		}
		return 1
	}
	if env.Log != nil {
		env.Log.Info("probe: found", "datasource", name, "subplatform", d.Subplatform, "duration", time.Since(start))
	}
	if d.Name == "" {
		d.Name = name
	}
	hostRoot := opts.root
	dist := distro.Detect(func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(hostRoot, p)) })
	out := probeInstanceData(d, dist, probeSysInfo(hostRoot))
	enc := json.NewEncoder(env.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(env.Stderr, "error: encoding JSON: %v\n", err)
		return 1
	}
	return 0
}

// probeInstanceData is instance-data-sensitive.json's dict plus the
// user-data, vendor-data and network configuration found.
func probeInstanceData(d *datasource.Data, dist distro.Info, si stages.SysInfo) map[string]any {
	out := stages.InstanceData(d, dist, map[string]any{}, map[string]any{}, si)
	var b64 []any
	text := func(key string, b []byte) {
		switch {
		case b == nil:
			out[key] = nil
		case utf8.Valid(b):
			out[key] = string(b)
		default:
			out[key] = base64.StdEncoding.EncodeToString(b)
			b64 = append(b64, key)
		}
	}
	text("userdata", d.UserData)
	text("vendordata", d.VendorData)
	if b64 != nil {
		out["base64_encoded_keys"] = b64
	}
	out["network_config"] = d.NetworkConfig
	if v1, ok := out["v1"].(map[string]any); ok {
		v1["cloud_id"] = d.CloudID()
		if d.Region != "" {
			v1["region"] = d.Region
		}
		if d.AvailabilityZone != "" {
			v1["availability_zone"] = d.AvailabilityZone
			v1["availability-zone"] = d.AvailabilityZone
		}
	}
	if ds, ok := out["ds"].(map[string]any); ok {
		for k, v := range d.DS {
			if _, taken := ds[k]; !taken {
				ds[k] = v
			}
		}
	}
	return out
}

// dmiFields are the names --dmi takes (the files of sys/class/dmi/id).
var dmiFields = []string{"sys_vendor", "product_name", "product_serial", "product_uuid", "product_version", "chassis_asset_tag", "board_vendor", "board_name"}

// dmiField is the field of d named by a sys/class/dmi/id file name, or nil.
func dmiField(d *bootenv.DMI, name string) *string {
	switch name {
	case "sys_vendor":
		return &d.SysVendor
	case "product_name":
		return &d.ProductName
	case "product_serial":
		return &d.ProductSerial
	case "product_uuid":
		return &d.ProductUUID
	case "product_version":
		return &d.ProductVersion
	case "chassis_asset_tag":
		return &d.ChassisAssetTag
	case "board_vendor":
		return &d.BoardVendor
	case "board_name":
		return &d.BoardName
	}
	return nil
}

// probeEnv is the datasource.Env of the running system under opts.root,
// with opts' overrides, under the boot's timing policy (the command
// line's cloudroot.ds-* keys, --timeout as its Deadline).
func probeEnv(env *Env, opts probeOptions) (datasource.Env, error) {
	denv, err := probeSystemEnv(env, opts)
	if err != nil {
		return denv, err
	}
	pol, perrs := datasource.CmdlinePolicy(denv.Cmdline)
	for _, e := range perrs {
		fmt.Fprintf(env.Stderr, "warning: %v\n", e)
	}
	if opts.timeout > 0 {
		pol.Deadline = opts.timeout
		pol = pol.Resolve()
	}
	denv.Policy = &pol
	return denv, nil
}

// probeSystemEnv is probeEnv without the policy.
func probeSystemEnv(env *Env, opts probeOptions) (datasource.Env, error) {
	root := opts.root
	dist := distro.Detect(func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(root, p)) })
	denv := datasource.Env{
		DMI:       bootenv.ReadDMI(filepath.Join(root, "sys")),
		NetworkUp: true,
		HTTP:      &http.Client{Transport: &http.Transport{Proxy: nil}},
		Log:       env.Log,
	}
	for k, v := range opts.dmi {
		*dmiField(&denv.DMI, k) = v
	}
	denv.DefaultUser = dist.DefaultUserName()
	if len(opts.urls) > 0 {
		urls := make([]any, len(opts.urls))
		for i, u := range opts.urls {
			urls[i] = u
		}
		denv.Config = map[string]any{opts.source.Name(): map[string]any{"metadata_urls": urls}}
	}
	if opts.seed != "" {
		return probeSeedEnv(denv, opts.seed)
	}
	denv.Root = os.DirFS(root)
	if b, err := os.ReadFile(filepath.Join(root, "proc", "cmdline")); err == nil {
		denv.Cmdline = bootenv.ParseCmdline(strings.TrimSpace(string(b)))
	}
	// The system configuration, read once as the boot does (VMware's
	// disable_vmware_customization).
	if r, err := target.New(root); err == nil {
		if m, err := cloudcfg.Load(cloudcfg.LoadOptions{Root: r, Cmdline: denv.Cmdline.String()}); m != nil {
			denv.System = m.System
		} else if env.Log != nil {
			env.Log.Debug("probe: reading the system configuration", "error", err)
		}
	}
	devs, err := bootenv.Env{SysRoot: filepath.Join(root, "sys"), DevRoot: filepath.Join(root, "dev")}.List()
	if err != nil && env.Log != nil {
		env.Log.Debug("probe: listing block devices", "error", err)
	}
	denv.Devices = devs
	return denv, nil
}

// probeSeedEnv points denv at a seed directory, root or image.
func probeSeedEnv(denv datasource.Env, seed string) (datasource.Env, error) {
	st, err := os.Stat(seed)
	if err != nil {
		return denv, err
	}
	if !st.IsDir() {
		f, err := os.Open(seed)
		if err != nil {
			return denv, err
		}
		defer f.Close()
		size := st.Size()
		if size <= 0 { // a block device
			if n, err := f.Seek(0, io.SeekEnd); err == nil {
				size = n
			}
		}
		fsys, err := bootenv.Probe(f, size)
		if err != nil {
			return denv, fmt.Errorf("--seed %s: %w", seed, err)
		}
		denv.Devices = []bootenv.Device{{Name: filepath.Base(seed), Path: seed, Size: size, FS: fsys}}
		return denv, nil
	}
	dir := os.DirFS(seed)
	has := func(name string) bool { _, err := fs.Stat(dir, name); return err == nil }
	switch {
	case has("meta-data") || has("user-data"):
		denv.Root = mountFS{at: strings.TrimPrefix(nocloud.SeedDirs()[0], "/"), fsys: dir}
	case has("openstack") || has("ec2"):
		denv.Root = mountFS{at: strings.TrimPrefix(configdrive.SeedDir, "/"), fsys: dir}
	default:
		denv.Root = dir
	}
	return denv, nil
}

// mountFS is a filesystem holding fsys at the slash path at, its parents
// as empty directories and nothing else.
type mountFS struct {
	at   string
	fsys fs.FS
}

func (m mountFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if name == m.at {
		f, err := m.fsys.Open(".")
		if err != nil {
			return nil, err
		}
		rd, ok := f.(fs.ReadDirFile)
		if !ok {
			f.Close()
			return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("not a directory")}
		}
		return mountPoint{rd, path.Base(name)}, nil
	}
	if rest, ok := strings.CutPrefix(name, m.at+"/"); ok {
		return m.fsys.Open(rest)
	}
	if name == "." || strings.HasPrefix(m.at, name+"/") {
		rest := strings.TrimPrefix(m.at, name+"/")
		child, _, _ := strings.Cut(rest, "/")
		d := &mountDir{name: path.Base(name), child: child}
		if name+"/"+child == m.at {
			if fi, err := fs.Stat(m.fsys, "."); err == nil {
				d.mount = renamed{fi, child}
			}
		}
		return d, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// mountDir is one of a mountFS's parent directories, holding child.
type mountDir struct {
	name, child string
	mount       fs.FileInfo // child's, when it is the mount point
	listed      bool
}

// mountPoint is the mounted directory, named as mounted.
type mountPoint struct {
	fs.ReadDirFile
	name string
}

func (m mountPoint) Stat() (fs.FileInfo, error) {
	fi, err := m.ReadDirFile.Stat()
	if err != nil {
		return nil, err
	}
	return renamed{fi, m.name}, nil
}

type renamed struct {
	fs.FileInfo
	name string
}

func (r renamed) Name() string { return r.name }

func (d *mountDir) Stat() (fs.FileInfo, error) { return d, nil }
func (d *mountDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}
func (d *mountDir) Close() error       { return nil }
func (d *mountDir) Name() string       { return d.name }
func (d *mountDir) Size() int64        { return 0 }
func (d *mountDir) Mode() fs.FileMode  { return fs.ModeDir | 0o755 }
func (d *mountDir) ModTime() time.Time { return time.Time{} }
func (d *mountDir) IsDir() bool        { return true }
func (d *mountDir) Sys() any           { return nil }
func (d *mountDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.listed || d.child == "" {
		if n > 0 {
			return nil, io.EOF
		}
		return nil, nil
	}
	d.listed = true
	var fi fs.FileInfo = &mountDir{name: d.child}
	if d.mount != nil {
		fi = d.mount
	}
	return []fs.DirEntry{fs.FileInfoToDirEntry(fi)}, nil
}

// probeSysInfo is uname under root (proc/sys/kernel), as identify reads it.
func probeSysInfo(root string) stages.SysInfo {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, "proc", "sys", "kernel", p))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	si := stages.SysInfo{
		System:        read("ostype"),
		KernelRelease: read("osrelease"),
		Version:       read("version"),
		Hostname:      read("hostname"),
		Machine:       identify.Machine(runtime.GOARCH),
	}
	if si.System == "" {
		si.System = "Linux"
	}
	return si
}

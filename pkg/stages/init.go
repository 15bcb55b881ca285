// Package stages wires cloudroot's boot stages from the packages that do the
// work: Init runs in the initramfs after the datasource is found (decode
// data, merge config, lay out /var/lib/cloud, apply the init modules to the
// target, build the hand-off state); Modules runs the config and final
// stages in the booted root from that state, never re-probing.
package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/cilog"
	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
	"github.com/cloudroot/cloudroot/pkg/cloudcfg/schema"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/distro"
	"github.com/cloudroot/cloudroot/pkg/modules"
	modbuiltin "github.com/cloudroot/cloudroot/pkg/modules/builtin"
	"github.com/cloudroot/cloudroot/pkg/modules/users"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

// InitOptions is what Init needs.
type InitOptions struct {
	// Target is the root being provisioned (/sysroot in the initramfs).
	Target *target.Root
	// Run is the root under which /run/cloud-init is written ("/" in the
	// initramfs, whose /run moves into the target at switch_root).
	Run *target.Root
	// Data is the datasource's answer.
	Data    *datasource.Data
	Cmdline string
	Log     *slog.Logger
	Out     io.Writer
	Now     func() time.Time
	Uptime  func() float64
	Version string
	SysInfo SysInfo
	// SetLiveHostname applies the hostname to the running kernel (nil: no).
	SetLiveHostname func(string) error
	// NetLinks are the machine's network interfaces (for MAC matching and
	// the fallback configuration).
	NetLinks []bootenv.NetLink
	// Fetch retrieves #include URLs (nil: includes are reported as
	// unsupported, e.g. when no network is up).
	Fetch func(ctx context.Context, url string) ([]byte, error)
	// IncludeBudget bounds every #include fetch of one user-data together
	// (the boot's imds.Policy.Include; 0: userdata's default).
	IncludeBudget time.Duration
	// HostKeys supplies SSH host keys (nil: generated when the ssh module
	// asks). Init starts the configured types in it as soon as the merged
	// configuration is known, so generation overlaps the rest of the stage.
	// When it reports users.ErrNoEntropy, generation is deferred to the
	// booted root (users.HostKeysDeferredMarker under Run).
	HostKeys *users.HostKeyPool
	// BackgroundHostKeys leaves the slow host-key types (RSA) to the
	// booted root's users.BackgroundHostKeysUnit when a fast one is
	// generated and the target enables that unit, so sshd need not wait
	// for them (users.HostKeysBackgroundMarker under Run). The
	// initramfs sets it; in the booted root every key is made before sshd,
	// as cloud-init does.
	BackgroundHostKeys bool
	// SystemFiles are the target's configuration files already read (nil:
	// Init reads them once from Target and Run).
	SystemFiles *cloudcfg.SystemFiles
	// Base is the base configuration the boot loaded (nil: Init loads it
	// from SystemFiles); Init merges the datasource's config and the
	// payloads over it without loading anything again.
	Base *cloudcfg.Base
	// Secrets, if set, is told the credentials (SecretValues) as soon as
	// the merged config is known, so the caller's log and console writers
	// can scrub them from then on.
	Secrets func([]string)
	// Network, if set, is told what the network step did (the initramfs
	// renames NICs by its IfupdownPre plan once it is done with them).
	Network func(*NetworkResult)
	// NoModules stops after the instance data: the datasource's answer
	// is instancified and its user-data processed, but no network is
	// rendered and no boothook or module runs (cloud-init single's fetch).
	NoModules bool
}

// Init provisions the target from o.Data and returns the state to hand
// over. st receives errors and recoverable errors for the init stage.
// Problems are recorded, never fatal: the returned error is only for a state
// that could not be built at all.
func Init(ctx context.Context, o InitOptions, stage *state.StageStatus, s *state.State) error {
	d := o.Data
	if d == nil {
		return errors.New("init: no datasource data")
	}
	warn := func(msg string) {
		o.Log.Warn(msg, "stage", "init")
		stage.AddRecoverable("WARNING", msg)
	}
	fail := func(msg string) {
		o.Log.Error(msg, "stage", "init")
		stage.Errors = append(stage.Errors, msg)
	}
	// cloud-init's "init-network" reporting event; its modules are children.
	var up float64
	if o.Uptime != nil {
		up = o.Uptime()
	}
	ev := cilog.StartStage(o.Log, "init-network", o.Version, o.Now, up)
	defer func() {
		if len(stage.Errors) > 0 {
			ev.Fail()
		}
		ev.Finish()
	}()

	iid := d.InstanceID()
	meta := moduleMeta(d)
	prev := PreviousInstanceID(o.Target)
	dist := distro.Detect(o.Target.ReadFile)
	s.Datasource = state.Datasource{Name: d.Name, Description: d.Description(), Platform: d.Platform, Subplatform: d.Subplatform, CloudName: d.CloudName}
	s.InstanceID = iid
	s.PreviousInstanceID = prev
	s.NewInstance = prev != iid
	s.MetaData = d.MetaData
	s.NetworkConfig = d.NetworkConfig
	s.Distro = dist.ID

	// Base configuration first: instance-data (which jinja templates read)
	// carries it, as cloud-init writes instance-data before it consumes
	// user-data.
	cfgBase := o.Base
	if cfgBase == nil {
		sysFiles := o.SystemFiles
		if sysFiles == nil {
			sysFiles = cloudcfg.ReadSystemFiles(o.Target, o.Run)
		}
		cfgBase = cloudcfg.LoadBase(cloudcfg.LoadOptions{Files: sysFiles, Cmdline: o.Cmdline})
	}
	base, err := cfgBase.Merge(cloudcfg.LoadOptions{Datasource: d.Config})
	if err != nil {
		for _, p := range base.Problems {
			warn(p.Error())
		}
	}
	for _, w := range base.Warnings {
		o.Log.Warn(w, "stage", "init") // cloud-init is silent: no recoverable error
	}
	idata := InstanceData(d, dist, base.System, base.System, o.SysInfo)

	// Decode user-data and vendor-data: every cloud-init format.
	idir := state.InstanceDir(iid)
	opts := userdata.Options{
		Fetch:         o.Fetch,
		IncludeBudget: o.IncludeBudget,
		IncludeOnceCache: &userdata.DirCache{
			Dir:       userdata.URLCacheDir(idir),
			ReadFile:  o.Target.ReadFile,
			WriteFile: o.Target.WriteFile,
		},
		InstanceData: idata,
	}
	decode := func(source string, raw []byte) *userdata.Result {
		res, err := userdata.Process(ctx, source, raw, opts)
		if err != nil {
			fail(fmt.Sprintf("%s: %v", source, err))
		}
		if res == nil {
			return &userdata.Result{}
		}
		for _, w := range res.Warnings {
			warn(w)
		}
		for _, n := range res.Notices {
			o.Log.Warn(n, "stage", "init")
		}
		for _, e := range res.Errors {
			if errors.Is(e, userdata.ErrUnsupported) {
				fail(e.Error())
			} else {
				warn(e.Error())
			}
		}
		return res
	}
	// Schema: problems are recorded, never fatal (cloud-init's behaviour).
	// Validated before the decoding below, so that the two parses of a
	// large cloud-config are never in memory at once.
	schemaDeprecated := func(m string) { stage.AddRecoverable("DEPRECATED", m) }
	schemaDetail := func(m string) { o.Log.Info(m, "stage", "init") }
	rawCloudConfig := userdata.Sniff(d.UserData) == userdata.TypeCloudConfig
	if rawCloudConfig {
		recordSchema(schema.ValidateUserData(d.UserData, "user-data"), "user-data", warn, schemaDeprecated, schemaDetail)
	}
	ud := decode("user-data", d.UserData)
	vd := decode("vendor-data", d.VendorData)
	vd2 := decode("vendor-data2", d.VendorData2)
	mergePart := func(acc map[string]any, c userdata.CloudConfig) map[string]any {
		out, err := cloudcfg.MergePart(acc, cloudcfg.Part{Name: c.Part, Config: c.Config, MergeHow: c.MergeHeader})
		if err != nil {
			warn(err.Error())
		}
		return out
	}
	userCfg, err := ud.Merged(mergePart)
	if err != nil {
		warn(fmt.Sprintf("user-data: %v", err))
	}
	vendorCfg, err := vd.Merged(mergePart)
	if err != nil {
		warn(fmt.Sprintf("vendor-data: %v", err))
	}
	vendor2Cfg, err := vd2.Merged(mergePart)
	if err != nil {
		warn(fmt.Sprintf("vendor-data2: %v", err))
	}

	// Merge every source in precedence order.
	m, err := cfgBase.Merge(cloudcfg.LoadOptions{Datasource: d.Config, UserConfig: userCfg, VendorConfig: vendorCfg, Vendor2Config: vendor2Cfg})
	if err != nil {
		for _, p := range m.Problems {
			if !containsProblem(base.Problems, p) {
				warn(p.Error())
			}
		}
	}
	merged := m.Config
	s.Config = merged
	if o.Secrets != nil {
		o.Secrets(SecretValues(s))
	}
	background := o.BackgroundHostKeys && users.BackgroundHostKeysEnabled(o.Target)
	if o.HostKeys != nil && s.NewInstance {
		types := HostKeyTypes(merged)
		if background {
			types, _ = users.SplitHostKeyTypes(types)
		}
		o.HostKeys.Start(types...)
	}

	// Lay out /var/lib/cloud for this instance.
	if err := WriteInstanceLayout(o.Target, o.Run, Layout{IID: iid, Previous: prev, Description: d.Description(), Again: InstancifiedTwice(d)}); err != nil {
		fail(err.Error())
	}
	if s.NewInstance || d.FilesEveryBoot {
		writeInjectedFiles(o.Target, d.Files, d.FileModes, o.Log, fail)
		applyFileOps(o.Target, d.FileOps, o.Log, warn)
	}
	writeSecret := func(p string, b []byte) {
		if err := o.Target.WriteFile(p, b, 0o600); err != nil {
			fail(err.Error())
		}
	}
	writeConfig := func(p string, res *userdata.Result, cfg map[string]any) {
		err := o.Target.WriteFileWith(p, target.WriteOpts{Perm: 0o600, UID: -1, GID: -1}, func(w io.Writer) error {
			return CloudConfigText(w, res, cfg)
		})
		if err != nil {
			fail(err.Error())
		}
	}
	// The raw user-data and vendor-data live once on disk, here; the state
	// file refers to them instead of carrying another copy.
	writeSecret(idir+"/user-data.txt", d.UserData)
	writeSecret(idir+"/vendor-data.txt", d.VendorData)
	s.UserDataFile, s.VendorDataFile = idir+"/user-data.txt", idir+"/vendor-data.txt"
	if err := WriteDatasourceCache(o.Target, d); err != nil {
		fail(err.Error())
	}
	writeConfig(idir+"/cloud-config.txt", ud, m.User)
	// cloud-init validates the merged user cloud-config (cloud-config.txt,
	// unless empty) whatever form the user-data had: MIME parts, #include,
	// gzip, a jinja template. A plain #cloud-config was validated above,
	// on its own bytes, for findings with its own line numbers.
	if !rawCloudConfig && len(m.User) > 0 {
		if b, err := o.Target.ReadFile(idir + "/cloud-config.txt"); err == nil && len(b) > 0 {
			recordSchema(schema.ValidateUserData(b, "cloud-config.txt"), "cloud-config.txt", warn, schemaDeprecated, schemaDetail)
		}
	}
	// Without vendor data cloud-init's _consume_vendordata returns early
	// ("no vendordata provided"): no vendor cloud-config file. The raw
	// vendor-data2.txt is written every time, empty when there is none
	// (_store_raw_vendordata).
	if m.VendorEnabled && len(d.VendorData) > 0 {
		writeConfig(idir+"/vendor-cloud-config.txt", vd, m.Vendor)
	}
	writeSecret(idir+"/vendor-data2.txt", d.VendorData2)
	if len(d.VendorData2) > 0 {
		if m.Vendor2Enabled {
			writeConfig(idir+"/vendor2-cloud-config.txt", vd2, m.Vendor2)
		}
	}

	// Scripts and boothooks land every boot, where cloud-init puts them
	// (instance/scripts, scripts/per-*, instance/boothooks); the final
	// stage's scripts_* modules run them with their own frequencies.
	files := ud.Files(iid, false)
	if m.VendorEnabled {
		files = append(files, vd.Files(iid, true)...)
	}
	if m.Vendor2Enabled {
		files = append(files, vd2.Files(iid, true)...)
	}
	var boothooks []userdata.File
	for _, f := range files {
		if err := o.Target.WriteFile(f.Path, f.Content, f.Mode); err != nil {
			fail(err.Error())
			continue
		}
		if f.Kind == "boothook" {
			boothooks = append(boothooks, f)
		}
	}
	sem := state.SemaphorePath(iid, "consume_data", state.PerInstance)
	if !o.Target.Exists(sem) {
		if err := o.Target.WriteFile(sem, []byte(fmt.Sprintf("%d: %f\n", 1, float64(o.Now().UnixNano())/1e9)), 0o644); err != nil {
			fail(err.Error())
		}
	}

	// Instance data for query/jinja and for tools that read it.
	if err := WriteInstanceData(o.Run, idata, merged); err != nil {
		fail(err.Error())
	}

	if o.NoModules {
		return nil
	}

	// Network configuration for the target, before anything in it starts.
	nres, err := ApplyNetwork(o.Target, o.Run, dist, o.Cmdline, m.System, merged, d.NetworkConfig, o.NetLinks, s.NewInstance, DSNetwork{UpdateEvents: d.NetworkUpdateEvents, Sources: d.NetworkConfigSources}, iid)
	if err != nil {
		warn(fmt.Sprintf("network: %v", err))
	}
	if nres != nil {
		o.Log.Info("network configuration", "source", nres.Source, "renderer", nres.Renderer, "files", strings.Join(nres.Files, ","))
		for _, w := range nres.Warnings {
			o.Log.Info(w)
		}
		for _, r := range nres.Rejected {
			warn(r)
		}
		if o.Network != nil {
			o.Network(nres)
		}
	}

	// Boothooks run every boot, before the init modules, with INSTANCE_ID.
	for _, f := range boothooks {
		if err := runBoothook(ctx, o, f.Path, iid); err != nil {
			warn(fmt.Sprintf("boothook %s failed: %v", f.Path, err))
		}
	}

	// Init-stage modules.
	mc := modules.NewContext(o.Target, modules.Options{
		Config:     merged,
		Meta:       meta,
		InstanceID: iid,
		Distro:     &dist,
		Datasource: d.Description(),
		Log:        o.Log.With("stage", state.StageInit),
		Out:        o.Out,
		Now:        o.Now,
		Uptime:     o.Uptime,
		Version:    o.Version,
		Status:     stage,
		Event:      ev,
		Modules:    modbuiltin.Modules(),
	})
	mc.SetLiveHostname = o.SetLiveHostname
	mc.DeferHostKeys = func(hd modules.HostKeyDeferral) error {
		return deferHostKeys(o.Run, s, hd)
	}
	if o.HostKeys != nil {
		mc.HostKeys = o.HostKeys
	}
	if background {
		mc.BackgroundHostKeys = func(hd modules.HostKeyDeferral) error {
			return writeHostKeyMarker(o.Run, users.HostKeysBackgroundMarker, hd)
		}
	}
	rep := modules.RunStage(ctx, mc, modules.StageInit)
	for _, e := range rep.Errors {
		fail(e)
	}
	for _, m := range rep.Ran {
		s.Timings = append(s.Timings, state.Timing{Stage: "init/" + m, Start: rep.Starts[m], Duration: rep.Durations[m]})
	}
	return nil
}

// HostKeyTypes are the host-key types the ssh module will generate for
// cfg: none when it gives ssh_keys, else ssh_genkeytypes or the defaults.
func HostKeyTypes(cfg map[string]any) []string {
	c := modules.Config(cfg)
	if _, ok := c["ssh_keys"].(map[string]any); ok {
		return nil
	}
	if c.Has("ssh_genkeytypes") {
		return modules.StringList(c["ssh_genkeytypes"])
	}
	return users.DefaultGenKeyTypes
}

// deferHostKeys leaves host-key generation to the booted root: the marker
// cloudroot-hostkeys.service starts on, and the types in the state.
func deferHostKeys(run *target.Root, s *state.State, d modules.HostKeyDeferral) error {
	if err := writeHostKeyMarker(run, users.HostKeysDeferredMarker, d); err != nil {
		return err
	}
	s.HostKeysDeferred = d.Types
	return nil
}

// writeHostKeyMarker writes d to marker for the booted root's unit.
func writeHostKeyMarker(run *target.Root, marker string, d modules.HostKeyDeferral) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encoding the host-key deferral: %w", err)
	}
	if err := run.WriteFile(marker, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", marker, err)
	}
	return nil
}

// SchemaWarning is cloud-init 26.x's one warning at boot for a
// cloud-config that fails its schema (validate_cloudconfig_schema with
// log_details=False: the details could hold secrets).
const SchemaWarning = "cloud-config failed schema validation! You may run 'sudo cloud-init schema --system' to check the details."

// recordSchema turns schema findings into status entries the way cloud-init
// 26.x reports invalid user-data at boot: one SchemaWarning for all the
// errors and unknown keys, and one DEPRECATED "Deprecated cloud-config
// provided: PATH: MSG, PATH: MSG" for the deprecations (by path, as 26.x
// finds them in the merged cloud-config, whose keys are sorted). Each
// finding also goes to detail (cloud-init.log at INFO, no recoverable
// error) with its line: cloud-init leaves that to `cloud-init schema --system`.
// label names what was validated in the details ("user-data" or the
// merged "cloud-config.txt", whose line numbers they are).
func recordSchema(r schema.Report, label string, warn, deprecated, detail func(string)) {
	failed := false
	var deps []schema.Finding
	for _, f := range r.Findings {
		if f.Notice {
			continue // logged with the user-data notices; cloud-init is silent
		}
		if f.Document {
			continue // not YAML or not a mapping: the user-data warnings say so, as cloud-init's part handler
		}
		msg := fmt.Sprintf("%s: %s: %s", label, schema.ProblemPath(f), f.Message)
		if f.Line > 0 {
			msg = fmt.Sprintf("%s: line %d: %s: %s", label, f.Line, schema.ProblemPath(f), f.Message)
		}
		switch f.Severity {
		case schema.Deprecation:
			deps = append(deps, f)
			detail("Deprecated cloud-config provided: " + msg)
		default:
			failed = true
			detail("Invalid cloud-config provided: " + msg)
		}
	}
	if len(deps) > 0 {
		sort.SliceStable(deps, func(i, j int) bool { return deps[i].Path < deps[j].Path })
		parts := make([]string, len(deps))
		for i, f := range deps {
			parts[i] = schema.ProblemPath(f) + ": " + f.Message
		}
		deprecated("Deprecated cloud-config provided: " + strings.Join(parts, ", "))
	}
	if failed {
		warn(SchemaWarning)
	}
}

func containsProblem(ps []*cloudcfg.Problem, p *cloudcfg.Problem) bool {
	for _, q := range ps {
		if q.Error() == p.Error() {
			return true
		}
	}
	return false
}

// runBoothook runs a boothook inside the target with INSTANCE_ID set.
func runBoothook(ctx context.Context, o InitOptions, path, iid string) error {
	env := append([]string{"PATH=" + target.DefaultPath, "HOME=/root", "LANG=C.UTF-8"}, userdata.BoothookEnv(iid)...)
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	return o.Target.Run(ctx, target.Cmd{Argv: []string{path}, Env: env, Stdout: out, Stderr: out})
}

// moduleMeta is the meta-data modules see: the datasource's meta-data plus
// the normalised fields some datasources carry outside it (public keys
// from OpenStack's public_keys or GCE's ssh-keys, the platform hostname), in
// the keys cloud-init's modules read.
func moduleMeta(d *datasource.Data) map[string]any {
	meta := make(map[string]any, len(d.MetaData)+2)
	for k, v := range d.MetaData {
		meta[k] = v
	}
	if len(d.PublicKeys) > 0 {
		keys := make([]any, 0, len(d.PublicKeys))
		for _, k := range d.PublicKeys {
			keys = append(keys, k)
		}
		meta["public-keys"] = keys
	}
	if h := d.LocalHostname(); h != "" {
		meta["local-hostname"] = h
	}
	return meta
}

// writeInjectedFiles writes the files a datasource injects (a config
// drive's `files`) on a new instance, as cloud-init's write_injected_files
// does: absolute paths in the target, mode 0660 unless modes says otherwise;
// a failure is recorded and the others are still written.
func writeInjectedFiles(t *target.Root, files map[string][]byte, modes map[string]fs.FileMode, log *slog.Logger, fail func(string)) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		abs := "/" + strings.TrimLeft(p, "/")
		mode, ok := modes[p]
		if !ok {
			mode = 0o660
		}
		if err := t.WriteFile(abs, files[p], mode); err != nil {
			fail(fmt.Sprintf("writing injected file %s: %v", abs, err))
			continue
		}
		log.Info("wrote injected file", "path", abs, "bytes", len(files[p]))
	}
}

// applyFileOps carries out a datasource's FileOps in the target; a failure
// is a warning and the next operation still runs.
func applyFileOps(t *target.Root, ops []datasource.FileOp, log *slog.Logger, warn func(string)) {
	for _, op := range ops {
		var err error
		switch op.Op {
		case datasource.FileRemove:
			err = t.Remove(op.Path)
		case datasource.FileSymlink:
			err = t.Symlink(op.Target, op.Path)
		case datasource.FileRename:
			if _, serr := t.Lstat(op.Path); serr != nil {
				continue
			}
			err = t.Rename(op.Path, op.Target)
		default:
			err = fmt.Errorf("unknown file operation %q", op.Op)
		}
		if err != nil {
			warn(fmt.Sprintf("datasource file operation %s %s: %v", op.Op, op.Path, err))
			continue
		}
		log.Info("datasource file operation", "op", op.Op, "path", op.Path, "target", op.Target)
	}
}

// Package vmware is cloud-init's VMware datasource (DataSourceVMware),
// which reads an instance's data by one of three transports: environment
// variables (containers), VMware's guestinfo keys, or a guest
// customization specification (IMC, which cloud-init used to read in
// DataSourceOVF).
//
// Contract (DataSourceVMware):
//   - Local: never touches a network; bounded by Env.Bound (under the
//     boot's Env.Policy its Deadline, else Env.Budget, else
//     DefaultBudget; without a Policy, on VMware, at least the
//     customization wait plus 5 s), each tool run by
//     Source.CommandTimeout.
//   - envvar: when VMX_GUESTINFO is set in the environment (Source.Environ,
//     else the process's), guestinfo keys come from VMX_GUESTINFO_METADATA,
//     _USERDATA, _VENDORDATA and their _ENCODING variables. No VMware
//     needed.
//   - Otherwise DMI must say VMware (product name or vendor containing
//     "vmware"), else ErrNotFound; nothing is run and no port touched.
//   - guestinfo: guestinfo.metadata, .userdata, .vendordata (and, for each
//     that is set, its .encoding: base64/b64, gzip+base64/gz+b64, anything
//     else plain) read with vmware-rpctool "info-get KEY", else vmtoolsd
//     --cmd, else the native backdoor RPCI channel (linux/amd64, see
//     backdoor.go); a tool that fails hands over to the next. A value that
//     is empty or "---" is unset.
//   - imc: when customization is allowed (system config
//     disable_vmware_customization: false, or datasource allow_raw_data,
//     default true) and the tools' deployPkg plugin is in the target root,
//     cust.cfg is awaited in Source.IMCDir (default /var/run/vmware-imc)
//     for vmware_cust_file_max_wait seconds (default 15). A LinuxPrep spec
//     gives local-hostname (HOSTNAME.DOMAINNAME), instance-id ([MISC]
//     INSTANCE-ID), timezone (config) and the NIC spec, handed on under
//     NetworkKey for netconfig.ConvertVMwareMap; a raw-data spec ([CLOUDINIT]
//     METADATA, USERDATA) names meta-data and user-data files beside it.
//     Password, custom-script and marker handling, the deployPkg status
//     reports and guestinfo.gc.status are not done.
//   - meta-data is JSON or YAML; its network (a mapping, or a string
//     decoded with network.encoding) becomes the network configuration and
//     meta-data network: {config: ...}. instance-id defaults to the
//     lowercased DMI product_uuid. Data: name "VMware", platform "vmware",
//     cloud_name meta-data's cloud-name else "vmware", mode net,
//     subplatform "envvar (VMX_GUESTINFO_METADATA)", "guestinfo
//     (guestinfo.metadata)" or "imc (vmware-tools)". SSH keys from
//     public-keys-data (or public_keys_data, public-keys, public_keys).
//   - With the guestinfo transport, meta-data's redact (or
//     cleanup-guestinfo) keys are overwritten with "---" (and their
//     .encoding cleared) by info-set, once everything parsed, unless
//     Source.ReadOnly. Failures are logged, not returned.
//   - cloud-init's host-info additions (local-ipv4/6, network.interfaces,
//     wait-on-network, advertising addresses by info-set) need live
//     interfaces and are not made.
//   - A value that does not decode, meta-data that is not a JSON or YAML
//     mapping, an unreadable or invalid customization is an error naming
//     the key or file; finding nothing is ErrNotFound.
package vmware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// DefaultBudget bounds one Get when neither Env.Policy nor Env.Budget
// does: the customization wait (15 s by default) and the guestinfo
// queries.
const DefaultBudget = 30 * time.Second

// Source is the VMware datasource. The zero value uses the process
// environment, the tools on PATH, the native backdoor and DefaultIMCDir.
type Source struct {
	// RPCTool and VMToolsd are the tools' commands (a name looked up on
	// PATH, or a path); "" means vmware-rpctool and vmtoolsd on PATH.
	RPCTool, VMToolsd string
	// CommandTimeout bounds one run of a tool; 0 means
	// DefaultCommandTimeout.
	CommandTimeout time.Duration
	// NoBackdoor disables the native backdoor transport.
	NoBackdoor bool
	// Environ is the environment the envvar transport reads; nil means
	// the process's.
	Environ map[string]string
	// IMCDir is where cust.cfg is looked for; "" means DefaultIMCDir.
	IMCDir string
	// ReadOnly skips the redact/cleanup-guestinfo writes (for probes and
	// dry runs).
	ReadOnly bool

	// port, when set, replaces the native backdoor port (tests).
	port func() (Port, func(), error)
}

var (
	_ datasource.Source          = (*Source)(nil)
	_ datasource.FallbackAllower = (*Source)(nil)
)

// Name implements datasource.Source.
func (*Source) Name() string { return "VMware" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads: "env `VMX_GUESTINFO` + `VMX_GUESTINFO_{METADATA,USERDATA,VENDORDATA}[_ENCODING]`; on VMware (DMI) guestinfo `guestinfo.{metadata,userdata,vendordata}[.encoding]` (base64, gzip+base64) via `vmware-rpctool`, `vmtoolsd --cmd` or the native backdoor RPCI channel; " +
			"else guest customization `" + DefaultIMCDir + "/cust.cfg` (LinuxPrep: hostname, domain, timezone, instance-id, NICs; raw data: [CLOUDINIT] meta-data and user-data files) when the deployPkg plugin is installed and customization is allowed",
		NetworkConfig: "meta-data `network` (v1/v2 mapping, or a string with `network.encoding`); IMC NIC spec handed on under `" + NetworkKey + "` for netconfig.ConvertVMwareMap; else fallback",
		Tests:         "golden cases with fake vmware-rpctool/vmtoolsd scripts, the envvar transport, a fake backdoor host speaking RPCI, LinuxPrep and raw-data cust.cfg; negatives (not VMware, no tool, unset keys, failing and hanging tools; under the boot's timing policy a slow tool and a late cust.cfg read, a hanging tool ended at the deadline; bad base64/gzip/JSON/YAML, bad specs, redaction); fuzzed decoding, meta-data and cust.cfg parsers and RPCI framing",
	}
}

// FallbackAllowed implements datasource.FallbackAllower: a cached answer
// from a customization may be reused when nothing is found (cloud-init's
// check_if_fallback_is_allowed; the customization files are gone after the
// first boot).
func (*Source) FallbackAllowed(cached *datasource.Data) bool {
	return cached != nil && cached.Name == "VMware" && strings.HasPrefix(cached.Subplatform, MethodIMC+" ")
}

// environ is the environment the envvar transport reads.
func (s *Source) environ() map[string]string {
	if s.Environ != nil {
		return s.Environ
	}
	m := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "VMX_GUESTINFO") {
			m[k] = v
		}
	}
	return m
}

// transports are the guestinfo transports to try on a VMware machine, in
// order: vmware-rpctool, vmtoolsd, the native backdoor.
func (s *Source) transports(env datasource.Env, log *slog.Logger) []Transport {
	var out []Transport
	if p := FindCommand(s.RPCTool, RPCToolName); p != "" {
		out = append(out, &CommandTransport{Path: p, Timeout: s.CommandTimeout})
	}
	if p := FindCommand(s.VMToolsd, VMToolsdName); p != "" {
		out = append(out, &CommandTransport{Path: p, VMToolsd: true, Timeout: s.CommandTimeout})
	}
	if s.NoBackdoor {
		return out
	}
	b, err := NewBackdoor(env.DMI)
	if s.port != nil && !errors.Is(err, ErrNotVMware) {
		b, err = &Backdoor{open: s.port}, nil
	}
	if err != nil {
		log.Debug("no native backdoor", "error", err)
		return out
	}
	return append(out, b)
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	log := env.Logger(s.Name())
	// On VMware the guest tools and the customization wait
	// (vmware_cust_file_max_wait) are waits on the platform: under the
	// boot's Policy they have its Deadline (Env.Bound; the caller's
	// context carries what is left of the search's), without one a
	// caller's shorter budget does not cut the customization wait.
	budget := env.Bound(DefaultBudget)
	if IsVMware(env.DMI) && env.Policy == nil {
		budget = max(budget, time.Duration(custMaxWait(env.SourceConfig(s.Name())))*time.Second+5*time.Second)
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	start := time.Now()

	environ := s.environ()
	if environ["VMX_GUESTINFO"] != "" {
		t := EnvTransport(environ)
		d, err := s.fromTransport(ctx, env, log, MethodEnvvar, t)
		if err != nil || d != nil {
			return s.done(log, d, err, t.Name(), start)
		}
	}
	if !IsVMware(env.DMI) {
		return nil, fmt.Errorf("vmware: not VMware (DMI product %q, vendor %q) and no VMX_GUESTINFO data: %w",
			env.DMI.ProductName, env.DMI.SysVendor, datasource.ErrNotFound)
	}
	var failed []error
	var tried []string
	for _, t := range s.transports(env, log) {
		tried = append(tried, t.Name())
		d, err := s.fromTransport(ctx, env, log, MethodGuestinfo, t)
		var terr *transportError
		if errors.As(err, &terr) {
			log.Warn("guestinfo transport failed", "transport", t.Name(), "error", err)
			failed = append(failed, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		if err != nil || d != nil {
			return s.done(log, d, err, t.Name(), start)
		}
		// The transport answered: no guestinfo data.
		break
	}
	if len(tried) == 0 {
		log.Debug("no guestinfo transport (no vmware-rpctool, vmtoolsd or backdoor)")
	}
	d, err := s.imc(ctx, env, log)
	if err != nil || d != nil {
		return s.done(log, d, err, MethodIMC, start)
	}
	if len(failed) > 0 {
		return nil, fmt.Errorf("vmware: no data: %w", errors.Join(failed...))
	}
	what := "guestinfo through " + strings.Join(tried, ", ")
	if len(tried) == 0 {
		what = "no guestinfo transport (vmware-rpctool, vmtoolsd, backdoor)"
	}
	return nil, fmt.Errorf("vmware: no guestinfo data (%s) and no customization: %w", what, datasource.ErrNotFound)
}

func (s *Source) done(log *slog.Logger, d *datasource.Data, err error, via string, start time.Time) (*datasource.Data, error) {
	if err != nil {
		return nil, fmt.Errorf("vmware: %w", err)
	}
	log.Info("found", "subplatform", d.Subplatform, "transport", via, "duration", time.Since(start))
	return d, nil
}

// transportError marks a transport that could not answer (the next one
// is tried), as opposed to data that is broken.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// fromTransport reads guestinfo through t and builds Data; nil Data and
// no error when t has none.
func (s *Source) fromTransport(ctx context.Context, env datasource.Env, log *slog.Logger, method string, t Transport) (*datasource.Data, error) {
	raw, err := readGuestinfo(ctx, t)
	if err != nil {
		return nil, &transportError{fmt.Errorf("guestinfo through %s: %w", t.Name(), err)}
	}
	name := keyName(method)
	dec, err := raw.decode(name)
	if err != nil {
		return nil, err
	}
	if !dec.any() {
		return nil, nil
	}
	mdKey := name(GuestinfoMetadata)
	md, err := ParseMetadata(mdKey, dec.metaData)
	if err != nil {
		return nil, err
	}
	d, err := Build(Input{
		Method: method, MetaDataKey: mdKey, MetaData: md,
		UserData: dec.userData, VendorData: dec.vendorData, ProductUUID: env.DMI.ProductUUID,
	})
	if err != nil {
		return nil, err
	}
	if method == MethodGuestinfo {
		s.redact(ctx, log, t, d.MetaData)
	}
	return d, nil
}

// redact overwrites the keys meta-data asks to redact with "---" and
// clears their encodings (cloud-init's guestinfo_redact_keys: a space,
// as a key cannot be set empty).
func (s *Source) redact(ctx context.Context, log *slog.Logger, t Transport, md map[string]any) {
	keys, bad := RedactKeys(md)
	for _, b := range bad {
		log.Warn("not redacting an invalid guestinfo key name", "key", b)
	}
	if len(keys) == 0 {
		return
	}
	if s.ReadOnly {
		log.Info("read-only: not redacting guestinfo", "keys", keys)
		return
	}
	for _, k := range keys {
		key := "guestinfo." + k
		log.Info("redacting guestinfo", "key", key, "transport", t.Name())
		if err := t.Set(ctx, key, emptyValue); err != nil {
			log.Error("failed to redact guestinfo", "key", key, "error", err)
		}
		if err := t.Set(ctx, key+".encoding", " "); err != nil {
			log.Error("failed to clear guestinfo encoding", "key", key+".encoding", "error", err)
		}
	}
}

// imc reads a guest customization (cloud-init's get_imc_data_fn); nil
// Data and no error when there is none to read.
func (s *Source) imc(ctx context.Context, env datasource.Env, log *slog.Logger) (*datasource.Data, error) {
	// The boot's merged system configuration (sys_cfg), read once by the
	// boot and handed over in Env.System; nil is an empty one.
	allowCust := !boolOpt(env.System, "disable_vmware_customization", true)
	dsCfg := env.SourceConfig(s.Name())
	allowRaw := boolOpt(dsCfg, "allow_raw_data", true)
	if !allowCust && !allowRaw {
		log.Debug("customization disabled (disable_vmware_customization, allow_raw_data)")
		return nil, nil
	}
	plugin := findPlugin(env.Root)
	if plugin == "" {
		log.Debug("no customization plugin in the target root", "plugin", PluginName)
		return nil, nil
	}
	dir := s.IMCDir
	if dir == "" {
		dir = DefaultIMCDir
	}
	wait := custMaxWait(dsCfg)
	log.Debug("waiting for the customization specification", "path", dir, "max_wait", wait)
	p, err := waitForCustCfg(ctx, dir, wait)
	if err != nil {
		log.Warn("gave up waiting for the customization specification", "error", err)
		return nil, nil
	}
	if p == "" {
		log.Debug("no customization specification", "path", dir)
		return nil, nil
	}
	b, err := readIMCFile(dir, CustCfgName)
	if err != nil {
		return nil, err
	}
	spec, err := ParseCustCfg(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	in := Input{Method: MethodIMC, MetaDataKey: p, ProductUUID: env.DMI.ProductUUID}
	switch {
	case spec.RawData() && allowRaw:
		mdPath := dirJoin(dir, spec.MetaDataName)
		mb, err := readIMCFile(dir, spec.MetaDataName)
		if err != nil {
			return nil, fmt.Errorf("%s: meta-data: %w", p, err)
		}
		if in.MetaData, err = ParseMetadata(mdPath, mb); err != nil {
			return nil, err
		}
		in.MetaDataKey = mdPath
		if spec.UserDataName != "" {
			ub, err := readIMCFile(dir, spec.UserDataName)
			if err != nil {
				return nil, fmt.Errorf("%s: user-data: %w", p, err)
			}
			in.UserData = []byte(strings.ReplaceAll(string(ub), "\r", ""))
		}
		if len(in.MetaData) == 0 && len(in.UserData) == 0 {
			log.Info("raw data customization holds no data", "path", p)
			return nil, nil
		}
	case !spec.RawData() && allowCust:
		if err := spec.CheckNetwork(); err != nil {
			return nil, fmt.Errorf("%s: network: %w", p, err)
		}
		in.MetaData, in.Config = spec.MetaData()
		in.NetworkConfig = spec.Network()
		if spec.MarkerID != "" && !markerExists(env.Root, spec.MarkerID) {
			var skipped []string
			if spec.HasPassword || spec.ResetPassword {
				skipped = append(skipped, "root password")
			}
			if spec.CustomScript != "" {
				skipped = append(skipped, "custom script "+spec.CustomScript)
			}
			if len(skipped) > 0 {
				log.Warn("customization steps not applied by cloudroot", "path", p, "marker", spec.MarkerID, "skipped", strings.Join(skipped, ", "))
			}
		}
	default:
		log.Info("customization of this kind is disabled", "path", p, "raw_data", spec.RawData(),
			"disable_vmware_customization", !allowCust, "allow_raw_data", allowRaw)
		return nil, nil
	}
	log.Info("customization found", "path", p, "plugin", plugin)
	return Build(in)
}

// dirJoin names a file of the IMC directory in messages.
func dirJoin(dir, name string) string { return strings.TrimSuffix(dir, "/") + "/" + name }

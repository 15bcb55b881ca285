// Package smartos is cloud-init's SmartOS datasource (dsname Joyent): the
// Joyent metadata protocol V2, spoken over the serial port /dev/ttyS1 in
// KVM and bhyve guests, or over the unix socket
// /native/.zonecontrol/metadata.sock in LX-branded zones.
//
// Contract (DataSourceSmartOS):
//   - Local: a serial port or a unix socket, never the network; bounded by
//     Env.Budget (default DefaultBudget), each answer by `serial_timeout`.
//   - An LX zone when `metadata_sockfile` (default DefaultSocket) is a
//     socket; else a KVM guest when DMI product_name starts with
//     "SmartDC" and `serial_device` (default DefaultSerialDevice) exists;
//     else ErrNotFound.
//   - KVM: the port is opened raw and locked (as mdata-get does), pending
//     input is flushed and a newline sent until "invalid command"; then
//     both transports "NEGOTIATE V2" and GET the keys cloud-init reads
//     (Attributes, then JSONAttributes). The serial client base64-decodes
//     values as cloud-init's legacy client does (base64_all, base64_keys,
//     b64-<key> metadata; `base64_all`/`base64_keys` configuration; never
//     the `no_base64_decode` keys).
//   - Data: meta-data names as cloud-init's (instance-id from sdc:uuid,
//     local-hostname from hostname, else sdc:hostname, else the instance
//     id, ...; missing keys are null); user-data from cloud-init:user-data;
//     vendor-data from sdc:vendor-data, else a boothook running the
//     operator-script and user-script on every boot; network config v1
//     from sdc:nics, sdc:resolvers, sdc:dns_domain, sdc:routes; Files: the
//     user-script (with a "#!/bin/bash" line when it has none),
//     operator-script and legacy user-data cloud-init writes; Config: the
//     ephemeral disk_setup/fs_setup on KVM and `disk_aliases` as
//     device_aliases. Name "SmartOS", platform and cloud_name "joyent",
//     subplatform "serial (<device>)" (LX: "socket (<path>)"), mode net.
//   - A transport that does not answer, a bad frame, a missing sdc:uuid or
//     invalid JSON in a JSON key is an error naming the device and key.
package smartos

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/serial"
)

// cloud-init's defaults.
const (
	DefaultSerialDevice  = "/dev/ttyS1"
	DefaultSerialTimeout = 60 * time.Second
	DefaultSocket        = "/native/.zonecontrol/metadata.sock"
)

// DefaultBudget bounds one Get when Env.Budget is 0 (cloud-init waits for
// the metadata service without end).
const DefaultBudget = 60 * time.Second

// Source is the SmartOS datasource. The zero value uses the defaults.
type Source struct {
	// SerialDevice and SocketPath override `serial_device` and
	// `metadata_sockfile`.
	SerialDevice, SocketPath string
	// CloudDir is cloud-init's cloud_dir for the paths in Files and the
	// default vendor-data; "" means DefaultCloudDir.
	CloudDir string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "SmartOS" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads:         "Joyent metadata protocol V2 over the serial port `" + DefaultSerialDevice + "` (KVM/bhyve, DMI `SmartDC*`; `serial_device`, `serial_timeout`) or the LX zone socket `" + DefaultSocket + "` (`metadata_sockfile`): `sdc:uuid`, `hostname`, `root_authorized_keys`, `user-script`, `user-data`, `cloud-init:user-data`, `sdc:vendor-data`, `sdc:operator-script`, `sdc:datacenter_name`, `sdc:hostname`, `sdc:dns_domain`, `sdc:nics`, `sdc:resolvers`, `sdc:routes`, ...; legacy base64 rules on the serial port",
		NetworkConfig: "v1 from `sdc:nics` (static/dhcp4/dhcp6 subnets, primary gateways), `sdc:routes`, `sdc:resolvers` and `sdc:dns_domain`",
		Tests:         "golden key sets served by a fake metadata server over a unix socket (LX) and a pty (KVM: flush, lock, base64 rules); protocol against net.Pipe fakes (CRC and length mismatch, wrong request id, NOTFOUND, garbage lines, silence within the budget); absent socket/device; fuzzed frame parser and sdc:nics conversion; QEMU boot over an emulated ttyS1 connected to the smartostest fake (TestSmartOS)",
	}
}

// config is the `datasource: {SmartOS: ...}` mapping, with defaults.
type config struct {
	serialDevice string
	timeout      time.Duration
	socket       string
	rules        b64Rules
	diskAliases  map[string]string
}

func (s *Source) config(env datasource.Env) (config, error) {
	raw := env.SourceConfig(s.Name())
	c := config{
		serialDevice: DefaultSerialDevice,
		timeout:      DefaultSerialTimeout,
		socket:       DefaultSocket,
		rules:        b64Rules{keys: map[string]bool{}, noDecode: map[string]bool{}},
		diskAliases:  map[string]string{},
	}
	for k, v := range DefaultDiskAliases() {
		c.diskAliases[k] = v
	}
	noDecode := DefaultNoBase64Decode
	var errs []error
	bad := func(key string, v any, want string) {
		errs = append(errs, fmt.Errorf("%s: expected %s, got %v (%T)", key, want, v, v))
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		v := raw[key]
		switch key {
		case "serial_device", "metadata_sockfile":
			p, ok := v.(string)
			if !ok || p == "" {
				bad(key, v, "a path")
				continue
			}
			if key == "serial_device" {
				c.serialDevice = p
			} else {
				c.socket = p
			}
		case "serial_timeout":
			n := v // as Python's float(): spaces around a number are fine
			if s, ok := v.(string); ok {
				n = strings.TrimSpace(s)
			}
			d, err := datasource.Seconds(n)
			if err != nil || d <= 0 {
				bad(key, v, "a positive number of seconds")
				continue
			}
			c.timeout = d
		case "base64_all":
			switch t := v.(type) {
			case bool:
				c.rules.all = t
			case string:
				c.rules.all = IsTrue(t)
			default:
				bad(key, v, "a boolean")
			}
		case "base64_keys":
			l, ok := stringList(v)
			if !ok {
				bad(key, v, "a list of keys")
				continue
			}
			for _, k := range l {
				c.rules.keys[k] = true
			}
		case "no_base64_decode":
			l, ok := stringList(v)
			if !ok {
				bad(key, v, "a list of keys")
				continue
			}
			noDecode = l
		case "disk_aliases":
			m, ok := v.(map[string]any)
			if !ok {
				bad(key, v, "a mapping")
				continue
			}
			for name, dev := range m {
				d, ok := dev.(string)
				if !ok {
					bad(key+"."+name, dev, "a device path")
					continue
				}
				c.diskAliases[name] = d
			}
		}
	}
	for _, k := range noDecode {
		c.rules.noDecode[k] = true
	}
	if s.SerialDevice != "" {
		c.serialDevice = s.SerialDevice
	}
	if s.SocketPath != "" {
		c.socket = s.SocketPath
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("datasource SmartOS configuration: %w", err)
	}
	return c, nil
}

// stringList reads a list of strings, or a comma-separated string.
func stringList(v any) ([]string, bool) {
	switch t := v.(type) {
	case string:
		return strings.Split(t, ","), true
	case []string:
		return t, true
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	log := env.Logger(s.Name())
	cfg, err := s.config(env)
	if err != nil {
		return nil, fmt.Errorf("smartos: %w", err)
	}
	mode, where := "", ""
	if fi, err := os.Stat(cfg.socket); err == nil && fi.Mode().Type() == fs.ModeSocket {
		mode, where = ModeLX, cfg.socket
	} else if strings.HasPrefix(env.DMI.ProductName, "SmartDC") {
		if _, err := os.Stat(cfg.serialDevice); err != nil {
			return nil, fmt.Errorf("smartos: DMI product_name %q but no serial device: %v: %w", env.DMI.ProductName, err, datasource.ErrNotFound)
		}
		mode, where = ModeKVM, cfg.serialDevice
	} else {
		return nil, fmt.Errorf("smartos: no metadata socket %s and DMI product_name %q is not SmartDC*: %w", cfg.socket, env.DMI.ProductName, datasource.ErrNotFound)
	}
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	log.Debug("reading metadata", "device", where, "mode", mode)
	values, err := s.read(ctx, mode, where, cfg, log)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("smartos: %w (after %s)", err, time.Since(start).Round(time.Millisecond))
		}
		return nil, fmt.Errorf("smartos: %w", err)
	}
	sub := "serial (" + where + ")"
	if mode == ModeLX {
		sub = "socket (" + where + ")"
	}
	d, err := Build(Input{Mode: mode, Subplatform: sub, Values: values, CloudDir: s.CloudDir, DiskAliases: cfg.diskAliases})
	if err != nil {
		return nil, fmt.Errorf("smartos: %s: %w", where, err)
	}
	d.Describe = Describe(mode, where, cfg.timeout)
	log.Info("found", "device", where, "duration", time.Since(start))
	return d, nil
}

// Describe is str(DataSourceSmartOS): the class and its metadata client's
// repr, "DataSourceSmartOS [client=JoyentMetadataLegacySerialClient(device=/dev/ttyS1, timeout=60)]"
// on KVM, "[client=JoyentMetadataSocketClient(socketpath=…)]" in an LX zone.
func Describe(mode, where string, timeout time.Duration) string {
	if mode == ModeLX {
		return "DataSourceSmartOS [client=JoyentMetadataSocketClient(socketpath=" + where + ")]"
	}
	return "DataSourceSmartOS [client=JoyentMetadataLegacySerialClient(device=" + where + ", timeout=" +
		strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64) + ")]"
}

// read opens the transport, readies it and reads the keys.
func (s *Source) read(ctx context.Context, mode, where string, cfg config, log *slog.Logger) (map[string]string, error) {
	var conn Conn
	if mode == ModeLX {
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", where)
		if err != nil {
			return nil, fmt.Errorf("connecting to %s: %w", where, err)
		}
		conn = c
		defer c.Close()
	} else {
		f, err := serial.OpenLocked(ctx, where)
		if err != nil {
			return nil, err
		}
		conn = f
		defer f.Close()
	}
	c := NewClient(conn, where)
	c.Timeout = cfg.timeout
	c.Log = log
	if mode == ModeKVM {
		if err := c.Flush(ctx); err != nil {
			return nil, err
		}
	}
	if err := c.Negotiate(ctx); err != nil {
		return nil, err
	}
	r := &reader{c: c, legacy: mode == ModeKVM, rules: cfg.rules, log: log}
	return r.readAll(ctx)
}

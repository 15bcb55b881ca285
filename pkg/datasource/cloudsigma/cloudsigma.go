// Package cloudsigma is cloud-init's CloudSigma datasource: the server
// context CloudSigma's hypervisor serves on the guest's second serial
// port, /dev/ttyS1 (cloud-init's cs_utils.Cepko).
//
// Contract (DataSourceCloudSigma):
//   - Local: the serial port only, never the network; bounded by
//     Env.Budget (default DefaultBudget), the reply by ReadTimeout and the
//     request by WriteTimeout, as cloud-init's.
//   - Present when DMI product_name contains "cloudsigma" (any case) and
//     the serial device (Source.Device, else `serial_device` of the
//     CloudSigma configuration, else DefaultDevice) exists; else
//     ErrNotFound.
//   - Sends "<\n\n>" (the whole server context) and reads one reply line,
//     a JSON object; EOT and newlines around it are dropped.
//   - Data: meta-data is the server context with instance-id added (its
//     uuid); user-data is meta["cloudinit-user-data"] (base64-decoded when
//     meta["base64_fields"] lists it; "" when absent); vendor-data is
//     vendor_data["cloudinit"]; the hostname is the server's name (at most
//     61 characters) when it is made of [A-Za-z0-9 -_.] (the range from
//     space to underscore, as cloud-init's pattern reads), else the
//     uuid's first group; public keys: meta["ssh_public_key"]. Mode is
//     meta["cloudinit-dsmode"] (default net; "disabled" is ErrNotFound).
//     Name "CloudSigma", platform and cloud_name "cloudsigma", subplatform
//     "cepko (<device>)". No network config (fallback).
//   - No reply within the budget, a reply that is not a JSON object with a
//     `meta` object and a `uuid`, or user-data that is not base64 when
//     said to be, is an error naming the device.
package cloudsigma

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/serial"
)

// DefaultDevice is cloud-init's SERIAL_PORT.
const DefaultDevice = "/dev/ttyS1"

// cloud-init's Cepko timeouts: the reply may be long.
const (
	ReadTimeout  = 60 * time.Second
	WriteTimeout = 10 * time.Second
)

// DefaultBudget bounds one Get when Env.Budget is 0.
const DefaultBudget = ReadTimeout + WriteTimeout

// Source is the CloudSigma datasource. The zero value uses the defaults.
type Source struct {
	// Device overrides the serial device.
	Device string
}

var _ datasource.Source = (*Source)(nil)

// Name implements datasource.Source.
func (*Source) Name() string { return "CloudSigma" }

// Doc implements datasource.Documented.
func (*Source) Doc() datasource.Doc {
	return datasource.Doc{
		Reads:         "the server context over the serial port `" + DefaultDevice + "` (DMI `product_name` containing `CloudSigma`): request `<\\n\\n>`, one JSON line; `meta.cloudinit-user-data` (base64 when listed in `meta.base64_fields`), `vendor_data.cloudinit`, `meta.cloudinit-dsmode`, `meta.ssh_public_key`, `uuid`, `name`",
		NetworkConfig: "none (fallback)",
		Tests:         "golden server contexts served on a pty (full with base64 user-data and vendor data, minimal, odd names); request/reply over net.Pipe fakes (EOT framing, silence and half replies within the budget, oversized replies, a port that never reads); malformed JSON, missing meta/uuid, bad base64, dsmode; fuzzed reply parser",
	}
}

// DevicePath is the serial device Get uses.
func (s *Source) DevicePath(env datasource.Env) string {
	if s.Device != "" {
		return s.Device
	}
	if p, ok := env.SourceConfig(s.Name())["serial_device"].(string); ok && p != "" {
		return p
	}
	return DefaultDevice
}

// Get implements datasource.Source.
func (s *Source) Get(ctx context.Context, env datasource.Env) (*datasource.Data, error) {
	log := env.Logger(s.Name())
	if !strings.Contains(strings.ToLower(env.DMI.ProductName), "cloudsigma") {
		return nil, fmt.Errorf("cloudsigma: DMI product_name %q: %w", env.DMI.ProductName, datasource.ErrNotFound)
	}
	dev := s.DevicePath(env)
	if _, err := os.Stat(dev); err != nil {
		return nil, fmt.Errorf("cloudsigma: no serial device: %v: %w", err, datasource.ErrNotFound)
	}
	ctx, cancel := env.WithBudget(ctx, DefaultBudget)
	defer cancel()
	start := time.Now()
	f, err := serial.Open(dev)
	if err != nil {
		return nil, fmt.Errorf("cloudsigma: %w", err)
	}
	defer f.Close()
	raw, err := Query(ctx, f, "")
	if err != nil {
		return nil, fmt.Errorf("cloudsigma: %s: %w", dev, err)
	}
	d, err := Parse(raw, dev)
	if err != nil {
		return nil, fmt.Errorf("cloudsigma: %s: %w", dev, err)
	}
	log.Info("found", "device", dev, "duration", time.Since(start))
	return d, nil
}

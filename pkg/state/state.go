// Package state is the serialized hand-off between cloudroot-init (in the
// initramfs) and the cloudroot agent (in the booted root), plus cloud-init's
// on-disk layout: /run/cloud-init and /var/lib/cloud.
//
// The state file is JSON, versioned, and written atomically into
// /run/cloud-init/cloudroot/state.json (the /run tmpfs is moved into the new
// root by switch_root) and mirrored as
// /var/lib/cloud/instances/<iid>/cloudroot-state.json. It carries user-data,
// so both copies are 0600. The agent reads it and never re-probes; a state of
// an unknown version is refused with ErrUnsupportedVersion.
package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/cloudroot/cloudroot/pkg/internal/jsonstream"
)

// Version is the state format written by this build. Readers refuse any other.
const Version = 1

// ErrUnsupportedVersion is returned when a state file has a version this
// build does not understand.
var ErrUnsupportedVersion = errors.New("unsupported cloudroot state version")

// ErrNoState means no state was handed over for this boot.
var ErrNoState = errors.New("no cloudroot state for this boot")

// State is everything the initramfs learned and decided during one boot.
type State struct {
	Version int `json:"version"`
	// Boot identifies the boot that wrote the state (kernel boot_id).
	BootID string `json:"boot_id,omitempty"`
	// Created is the wall-clock time the state was written.
	Created time.Time `json:"created"`

	// Disabled is true when provisioning did not run (disabled or no datasource).
	Disabled bool `json:"disabled,omitempty"`
	// Mode is where the local and network stages ran: "initramfs" (the
	// default when empty) or "in-root" (the agent, no initramfs hand-off).
	Mode           string `json:"mode,omitempty"`
	DisabledReason string `json:"disabled_reason,omitempty"`

	// DatasourceList is what detection decided to try, in order.
	DatasourceList []string `json:"datasource_list,omitempty"`

	Datasource Datasource `json:"datasource"`
	InstanceID string     `json:"instance_id,omitempty"`
	// PreviousInstanceID is the instance-id found on disk before this boot.
	PreviousInstanceID string `json:"previous_instance_id,omitempty"`
	// NewInstance is true when InstanceID differs from PreviousInstanceID.
	NewInstance bool `json:"new_instance"`
	// Restored says how the datasource's answer was reused from the
	// previous boot's cache instead of searched for ("restored from checked
	// cache: DataSourceNoCloud [...]"); empty when it was searched.
	Restored string `json:"restored,omitempty"`

	MetaData map[string]any `json:"meta_data,omitempty"`
	// UserData and VendorData are inline copies; the initramfs no longer
	// writes them (a large user-data would be held and encoded again), but
	// UserDataFile and VendorDataFile: the raw data's path in the target
	// (instances/<iid>/user-data.txt, vendor-data.txt, 0600).
	UserData       []byte         `json:"user_data,omitempty"`
	VendorData     []byte         `json:"vendor_data,omitempty"`
	UserDataFile   string         `json:"user_data_file,omitempty"`
	VendorDataFile string         `json:"vendor_data_file,omitempty"`
	NetworkConfig  map[string]any `json:"network_config,omitempty"`

	// Config is the merged cloud-config the modules see.
	Config map[string]any `json:"config,omitempty"`
	// Distro is the target's os-release ID, as detected by the initramfs.
	Distro string `json:"distro,omitempty"`

	// Cmdline is the kernel command line of this boot.
	Cmdline string `json:"cmdline,omitempty"`

	// HostKeysDeferred are the SSH host-key types the initramfs could not
	// generate (kernel RNG not ready); the agent's `cloudroot hostkeys`
	// generates them before sshd starts.
	HostKeysDeferred []string `json:"host_keys_deferred,omitempty"`

	// Timings records the duration of every initramfs stage, in order.
	Timings []Timing `json:"timings"`
	// Errors and warnings recorded before handoff.
	Errors   []string `json:"errors,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Datasource names the source the data came from.
type Datasource struct {
	// Name is cloud-init's datasource name, e.g. "NoCloud".
	Name string `json:"name"`
	// Description is str(DataSource) as cloud-init prints it, e.g.
	// "DataSourceNoCloud [seed=/dev/sr0]".
	Description string `json:"description"`
	// Platform and Subplatform are instance-data's v1.platform/subplatform.
	Platform    string `json:"platform"`
	Subplatform string `json:"subplatform"`
	CloudName   string `json:"cloud_name"`
}

// Timing is one measured stage.
type Timing struct {
	Stage string `json:"stage"`
	// Start is seconds since boot (CLOCK_BOOTTIME).
	Start float64 `json:"start"`
	// Duration in seconds.
	Duration float64 `json:"duration"`
	Error    string  `json:"error,omitempty"`
}

// Marshal encodes s with the current version.
func Marshal(s *State) ([]byte, error) {
	s.Version = Version
	// Compact: indenting would hold a second copy of a state whose config
	// may carry large write_files content (docs/security.md, "Memory ceiling").
	var b bytes.Buffer
	if err := Encode(&b, s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Encode writes s as Marshal does, straight to w: the config (which may
// carry large write_files content) is encoded into w as it goes instead of
// into one buffer first (docs/security.md, "Memory ceiling"). The rest of
// the state is small; it is marshalled with a placeholder for the config and
// written around it. The placeholder is an object with one key, numbered
// until it occurs once in the output (metadata could hold the same object);
// not a random key: the initramfs may hand off before the kernel's RNG is
// ready, and reading it would block.
func Encode(w io.Writer, s *State) error {
	s.Version = Version
	if len(s.Config) == 0 {
		if err := json.NewEncoder(w).Encode(s); err != nil {
			return fmt.Errorf("state: encode: %w", err)
		}
		return nil
	}
	shadow := *s
	for i := 0; ; i++ {
		key := fmt.Sprintf("cloudroot-config-placeholder-%d", i)
		shadow.Config = map[string]any{key: nil}
		b, err := json.Marshal(&shadow)
		if err != nil {
			return fmt.Errorf("state: encode: %w", err)
		}
		mark := []byte(`{"` + key + `":null}`)
		if bytes.Count(b, mark) != 1 {
			continue
		}
		at := bytes.Index(b, mark)
		if _, err := w.Write(b[:at]); err != nil {
			return fmt.Errorf("state: encode: %w", err)
		}
		if err := jsonstream.EncodeTyped(w, s.Config, ""); err != nil {
			return fmt.Errorf("state: encode config: %w", err)
		}
		if _, err := w.Write(append(b[at+len(mark):], '\n')); err != nil {
			return fmt.Errorf("state: encode: %w", err)
		}
		return nil
	}
}

// Unmarshal decodes a state file, refusing unknown versions.
func Unmarshal(b []byte) (*State, error) {
	var probe struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("state: decode: %w", err)
	}
	if probe.Version == nil {
		return nil, fmt.Errorf("state: no version field: %w", ErrUnsupportedVersion)
	}
	if *probe.Version != Version {
		return nil, fmt.Errorf("state: version %d (this build reads %d): %w", *probe.Version, Version, ErrUnsupportedVersion)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("state: decode: %w", err)
	}
	s.Config = numbers(s.Config).(map[string]any)
	s.MetaData = numbers(s.MetaData).(map[string]any)
	s.NetworkConfig = numbers(s.NetworkConfig).(map[string]any)
	return &s, nil
}

// numbers gives the JSON numbers in v the Go types the YAML loader gives
// (yaml11.Scalar) and Python's json.load makes of them: an integer (int,
// *big.Int beyond int64) when the text has no fraction or exponent, else a
// float64. encoding/json's float64 for every number would reach the
// modules as 2.0 where the user wrote 2 (apt_pipelining: 2 is then
// "Invalid option"); the config was encoded by EncodeTyped, so 2.0 keeps
// its fraction and stays a float.
func numbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = numbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = numbers(x)
		}
	case json.Number:
		s := string(t)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return int(i)
			}
			if b, ok := new(big.Int).SetString(s, 10); ok {
				return b
			}
		}
		f, _ := strconv.ParseFloat(s, 64)
		return f
	}
	return v
}

package smartos

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/internal/golden"
)

// caseFile is testdata/<case>/case.json.
type caseFile struct {
	// Mode is "kvm" (served on a pty) or "lx" (a unix socket).
	Mode        string         `json:"mode"`
	ProductName string         `json:"product_name"`
	Config      map[string]any `json:"config"`
}

// TestGolden serves each testdata case's keys with the fake, over a pty
// for KVM cases and a unix socket for LX ones, and compares the Data and
// the requests made.
// upstreamDiffers are the fields of each case's upstream golden where
// cloudroot deliberately differs (docs/datasources.md).
var upstreamDiffers = map[string]dstest.Differs{
	"kvm-base64": {
		"vendordata_raw": "cloud-init's b64-<key> flags are read off by one (k[3:] of \"b64-key\" is \"-key\"), so they never apply; cloudroot honours them as documented",
		"config_obj":     deviceAliases,
	},
	"kvm-base64-all": {"found": "cloud-init's no_base64_decode list lacks a comma (\"sdc:uuiduser-data\"), so with base64_all it decodes sdc:uuid and fails (UnicodeDecodeError); cloudroot keeps sdc:uuid and user-data out as intended"},
	"lx-full":        lxDiffers,
	"lx-minimal":     lxDiffers,
}

const deviceAliases = "disk_aliases are handed on as the configuration's device_aliases (cloud-init answers them through device_name_to_device)"

var lxDiffers = dstest.Differs{
	"subplatform": "in an LX zone cloudroot names the metadata socket; cloud-init says serial (/dev/ttyS1) there too",
	"config_obj":  deviceAliases,
}

func TestGolden(t *testing.T) {
	for _, name := range dstest.Cases(t, "testdata") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			var values map[string]string
			dstest.ReadJSON(t, filepath.Join(dir, "metadata.json"), &values)
			var c caseFile
			dstest.ReadJSON(t, filepath.Join(dir, "case.json"), &c)
			f := newFake(values)
			src := &Source{}
			var where, placeholder string
			switch c.Mode {
			case "kvm":
				where, placeholder = servePTY(t, f), DefaultSerialDevice
				src.SerialDevice = where
				src.SocketPath = filepath.Join(t.TempDir(), "absent.sock")
			case "lx":
				where, placeholder = serveSocket(t, f), DefaultSocket
				src.SocketPath = where
			default:
				t.Fatalf("case.json: mode %q", c.Mode)
			}
			env := datasource.Env{
				DMI:    bootenv.DMI{ProductName: c.ProductName},
				Config: map[string]any{"SmartOS": c.Config},
				Budget: 20 * time.Second,
			}
			d, err := src.Get(context.Background(), env)
			if err != nil {
				dstest.Upstream(t, dir, d, err, "", upstreamDiffers[name])
				t.Fatal(err)
			}
			d.Subplatform = strings.ReplaceAll(d.Subplatform, where, placeholder)
			d.Describe = strings.ReplaceAll(d.Describe, where, placeholder)
			dstest.Upstream(t, dir, d, err, "", upstreamDiffers[name])
			dstest.Golden(t, filepath.Join(dir, "want.json"), d, "")
			golden.CheckString(t, filepath.Join(dir, "requests.txt"), strings.Join(f.requests(), "\n")+"\n")
		})
	}
}

// TestNotFound: no socket and no SmartDC product name, or a SmartDC
// product name without the serial device, is not SmartOS.
func TestNotFound(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		src     Source
		product string
	}{
		{"nothing", Source{SocketPath: filepath.Join(dir, "none"), SerialDevice: file}, "KVM"},
		{"socket path is a file", Source{SocketPath: file, SerialDevice: file}, ""},
		{"socket path is a directory", Source{SocketPath: dir, SerialDevice: file}, "Standard PC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.src.Get(context.Background(), datasource.Env{DMI: bootenv.DMI{ProductName: tc.product}})
			if !errors.Is(err, datasource.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		})
	}
}

// TestConfig: serial_device and metadata_sockfile come from the
// configuration when the Source sets none; bad values are errors naming
// the key.
func TestConfig(t *testing.T) {
	f := newFake(map[string]string{"sdc:uuid": "u1"})
	sock := serveSocket(t, f)
	env := datasource.Env{Config: map[string]any{"smartos": map[string]any{"metadata_sockfile": sock}}}
	d, err := (&Source{}).Get(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != "u1" || d.Subplatform != "socket ("+sock+")" {
		t.Errorf("got %q %q", d.InstanceID(), d.Subplatform)
	}
	for key, v := range map[string]any{
		"serial_timeout":   "soon",
		"serial_device":    42,
		"base64_keys":      []any{"a", 1},
		"no_base64_decode": map[string]any{},
		"disk_aliases":     map[string]any{"ephemeral0": 1},
		"base64_all":       1.5,
	} {
		env := datasource.Env{Config: map[string]any{"SmartOS": map[string]any{key: v, "metadata_sockfile": sock}}}
		_, err := (&Source{}).Get(context.Background(), env)
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%v: err = %v, want one naming the key", key, v, err)
		}
	}
}

// TestBroken: a metadata service that is there but misbehaves is an error
// (not ErrNotFound) naming the socket, and a silent one costs at most the
// budget.
func TestBroken(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]string
		hook   func(op, arg, id string) ([]string, bool)
		onLine func(string) ([]string, bool)
		want   string
	}{
		{name: "no sdc:uuid", values: map[string]string{"hostname": "h"}, want: "sdc:uuid: no instance id"},
		{name: "bad sdc:nics JSON", values: map[string]string{"sdc:uuid": "u", "sdc:nics": "[{"}, want: "sdc:nics: invalid JSON"},
		{name: "sdc:nics not a list", values: map[string]string{"sdc:uuid": "u", "sdc:nics": `{"interface": "net0"}`}, want: "sdc:nics: expected a list"},
		{name: "nic without interface", values: map[string]string{"sdc:uuid": "u", "sdc:nics": `[{"mac": "x"}]`}, want: "sdc:nics[0]: no interface"},
		{name: "instance id escapes", values: map[string]string{"sdc:uuid": "../../etc"}, want: "cannot name a directory"},
		{name: "negotiation refused", onLine: func(l string) ([]string, bool) {
			return []string{"V1_ONLY"}, l == "NEGOTIATE V2"
		}, want: `NEGOTIATE V2: metadata protocol error: answered "V1_ONLY"`},
		{name: "bad checksum", values: map[string]string{"sdc:uuid": "u"}, hook: func(op, arg, id string) ([]string, bool) {
			return []string{"V2 25 00000000 " + id + " SUCCESS dmFsdWU="}, arg == "hostname"
		}, want: "GET hostname: metadata protocol error: checksum"},
		{name: "server failure", values: map[string]string{"sdc:uuid": "u"}, hook: func(op, arg, id string) ([]string, bool) {
			return []string{reply(id, "FAILURE", nil)}, arg == "sdc:nics"
		}, want: "GET sdc:nics: server answered FAILURE"},
		{name: "silent", values: map[string]string{"sdc:uuid": "u"}, hook: func(op, arg, id string) ([]string, bool) {
			return nil, arg == "user-script"
		}, want: "GET user-script: waiting for an answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(tc.values)
			f.hook, f.onLine = tc.hook, tc.onLine
			sock := serveSocket(t, f)
			env := datasource.Env{Budget: 300 * time.Millisecond}
			_, err := (&Source{SocketPath: sock}).Get(context.Background(), env)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), sock) {
				t.Fatalf("err = %v, want containing %q and the socket", err, tc.want)
			}
			if errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("a broken service is not ErrNotFound: %v", err)
			}
		})
	}
	t.Run("nobody listening", func(t *testing.T) {
		sock := dstest.DeadSocket(t)
		_, err := (&Source{SocketPath: sock}).Get(context.Background(), datasource.Env{})
		if err == nil || errors.Is(err, datasource.ErrNotFound) || !strings.Contains(err.Error(), "connecting to "+sock) {
			t.Errorf("err = %v, want a connection error that is not ErrNotFound", err)
		}
	})
}

// TestConform: the cases every serial/backdoor transport shares, over
// the LX socket (the pty path is the same protocol reader).
func TestConform(t *testing.T) {
	dstest.ConformTransport(t, dstest.Transport{
		Absent: func(t *testing.T) (datasource.Source, datasource.Env) {
			dir := t.TempDir()
			return &Source{SocketPath: filepath.Join(dir, "none"), SerialDevice: filepath.Join(dir, "ttyS1")},
				datasource.Env{DMI: bootenv.DMI{ProductName: "SmartDC HVM"}}
		},
		Answering: func(t *testing.T, reply []byte) (datasource.Source, datasource.Env, string) {
			f := newFake(nil)
			f.onLine = func(string) ([]string, bool) { return []string{string(reply)}, true }
			sock := serveSocket(t, f)
			return &Source{SocketPath: sock}, datasource.Env{Budget: 2 * time.Second}, sock
		},
	})
}

func TestDoc(t *testing.T) {
	d := (&Source{}).Doc()
	if d.Network || d.Reads == "" || d.NetworkConfig == "" || d.Tests == "" {
		t.Errorf("incomplete doc: %+v", d)
	}
}

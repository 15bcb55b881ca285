package userdata

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSniff(t *testing.T) {
	for in, want := range map[string]string{
		"#cloud-config\na: 1":           TypeCloudConfig,
		"#cloud-config-archive\n- a":    "text/cloud-config-archive",
		"#cloud-config-jsonp\n[]":       "text/cloud-config-jsonp",
		"#!/bin/sh\necho":               TypeShellScript,
		"#include\nhttp://x":            "text/x-include-url",
		"#include-once\nhttp://x":       "text/x-include-once-url",
		"#cloud-boothook\necho":         "text/cloud-boothook",
		"## template: jinja\n#!/bin/sh": "text/jinja2",
		"#part-handler\n":               "text/part-handler",
		"Content-Type: multipart/mixed": "multipart/mixed",
		"\x1f\x8b\x08":                  "application/gzip",
		"hello world":                   "",
	} {
		if got := Sniff([]byte(in)); got != want {
			t.Errorf("Sniff(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in         string
		wantCfg    []map[string]any
		wantScript int
		wantWarn   int
		wantErr    string
		unsupp     bool
	}{
		{name: "empty", in: ""},
		{name: "cloud-config", in: "#cloud-config\nhostname: h\nruncmd: [ls]\n",
			wantCfg: []map[string]any{{"hostname": "h", "runcmd": []any{"ls"}}}},
		{name: "cloud-config empty doc", in: "#cloud-config\n", wantCfg: []map[string]any{{}}},
		{name: "script", in: "#!/bin/sh\necho hi\n", wantScript: 1},
		{name: "plain text", in: "just some words\n", wantWarn: 1},
		{name: "bad yaml", in: "#cloud-config\nusers: [\n  - bad: [yaml\n", wantErr: "line"},
		{name: "list at top", in: "#cloud-config\n- a\n- b\n", wantErr: "expected a mapping"},
		{name: "include unsupported", in: "#include\nhttp://127.0.0.1/x\n", wantErr: "text/x-include-url", unsupp: true},
		{name: "mime unsupported", in: "Content-Type: multipart/mixed; boundary=x\n", wantErr: "multipart", unsupp: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Decode("user-data", []byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "user-data: ") {
					t.Errorf("error does not name the source: %v", err)
				}
				if errors.Is(err, ErrUnsupported) != tc.unsupp {
					t.Errorf("errors.Is(ErrUnsupported) = %v, want %v", !tc.unsupp, tc.unsupp)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantCfg, res.Configs()); diff != "" {
				t.Errorf("configs (-want +got):\n%s", diff)
			}
			if got := len(res.Scripts()); got != tc.wantScript {
				t.Errorf("scripts = %d, want %d", got, tc.wantScript)
			}
			if got := len(res.Warnings); got != tc.wantWarn {
				t.Errorf("warnings = %v, want %d", res.Warnings, tc.wantWarn)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"#cloud-config\na: [1, 2]\n", "#!/bin/sh\n", "#include\nx", "plain", "#cloud-config\n- x", "#cloud-config\n? [a]\n: b\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := Decode("user-data", b)
		if res == nil {
			t.Fatal("nil result")
		}
		_ = err
		for _, c := range res.Configs() {
			for k := range c {
				_ = k
			}
		}
	})
}

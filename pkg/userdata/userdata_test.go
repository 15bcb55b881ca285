package userdata

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSniff(t *testing.T) {
	for in, want := range map[string]string{
		"#cloud-config\na: 1":                    TypeCloudConfig,
		"#cloud-config-archive\n- a":             TypeCloudConfigArchive,
		"#cloud-config-jsonp\n[]":                TypeCloudConfigJSONP,
		"#!/bin/sh\necho":                        TypeShellScript,
		"#include\nhttp://x":                     TypeInclude,
		"#include-once\nhttp://x":                TypeIncludeOnce,
		"#cloud-boothook\necho":                  TypeBoothook,
		"## template: jinja\n#!/bin/sh":          TypeJinja,
		"## Template: Jinja\n#!/bin/sh":          TypeJinja,
		"#part-handler\n":                        TypePartHandler,
		"\n  #CLOUD-CONFIG\n":                    TypeCloudConfig,
		"MIME-Version: 1.0\nContent-Type: x/y\n": TypeMultipart,
		"Content-Type: multipart/mixed":          "", // no MIME-Version: plain text, as cloud-init
		"\x1f\x8b\x08":                           TypeGzip,
		"hello world":                            "",
		"#cloud-config\xff\xfe":                  "", // not UTF-8: cloud-init cannot decode it
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
		is         error
	}{
		{name: "empty", in: ""},
		{name: "cloud-config", in: "#cloud-config\nhostname: h\nruncmd: [ls]\n",
			wantCfg: []map[string]any{{"hostname": "h", "runcmd": []any{"ls"}}}},
		// cloud-init's handler refuses an empty part with a warning.
		{name: "cloud-config empty doc", in: "#cloud-config\n", wantCfg: []map[string]any{{}}, wantWarn: 1},
		{name: "script", in: "#!/bin/sh\necho hi\n", wantScript: 1},
		{name: "plain text", in: "just some words\n", wantWarn: 1},
		{name: "bad yaml", in: "#cloud-config\nusers: [\n  - bad: [yaml\n", wantErr: "line"},
		// Not a mapping: load_yaml's warning (launch-index, then the
		// handler) and the handler's "empty cloud config".
		{name: "list at top", in: "#cloud-config\n- a\n- b\n", wantWarn: 3},
		{name: "include without fetcher", in: "#include\nhttp://127.0.0.1/x\n", wantErr: "line 2", is: ErrNoFetcher},
		{name: "part handler", in: "#part-handler\ndef x(): pass\n", wantWarn: 1},
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
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("errors.Is(%v) = false", tc.is)
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

func TestErrorsNameSource(t *testing.T) {
	res, err := Process(context.Background(), "vendor-data", []byte("#cloud-config\na: [\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0].Error(), "vendor-data: part-001: invalid #cloud-config: line 2") {
		t.Errorf("errors = %v", res.Errors)
	}
	var e *Error
	if !errors.As(res.Errors[0], &e) || e.Source != "vendor-data" || e.Part != "part-001" {
		t.Errorf("not an *Error naming the part: %#v", res.Errors[0])
	}
}

func TestMergedAppliesPatchesInOrder(t *testing.T) {
	in := mimeOf(t,
		Attachment{"a", "cloud-config", []byte("#cloud-config\nruncmd: [a]\nuid: 1000\n")},
		Attachment{"p", "cloud-config-jsonp", []byte(`#cloud-config-jsonp
[{"op": "add", "path": "/runcmd/-", "value": "b"}]`)},
		Attachment{"b", "cloud-config", []byte("#cloud-config\npackages: [p]\n")},
		Attachment{"bad", "cloud-config-jsonp", []byte(`[{"op": "remove", "path": "/nope"}]`)},
	)
	res, err := Process(context.Background(), "user-data", in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A shallow replace-merge: the config package supplies the real one.
	merge := func(acc map[string]any, c CloudConfig) map[string]any {
		for k, v := range c.Config {
			acc[k] = v
		}
		return acc
	}
	got, err := res.Merged(merge)
	if err == nil || !strings.Contains(err.Error(), "bad: applying JSON patch") {
		t.Errorf("err = %v, want the failing patch named", err)
	}
	want := map[string]any{"runcmd": []any{"a", "b"}, "uid": 1000, "packages": []any{"p"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
}

func TestCleanFilename(t *testing.T) {
	for in, want := range map[string]string{
		"part-001":         "part-001",
		"../../etc/evil":   ".._.._etc_evil",
		"my script (1).sh": "myscript(1).sh",
		"..":               "part",
		"":                 "part",
		"é/ü":              "_",
	} {
		if got := CleanFilename(in); got != want {
			t.Errorf("CleanFilename(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Process(ctx, "user-data", []byte("#cloud-config\n"), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestPartNumberingAcrossIncludes(t *testing.T) {
	in := mimeOf(t,
		Attachment{"", "x-shellscript", []byte("#!/bin/sh\necho 1\n")},
		Attachment{"", "x-include-url", []byte("http://h/a\nhttp://h/b\n")},
		Attachment{"", "x-shellscript", []byte("#!/bin/sh\necho 4\n")},
	)
	res, err := Process(context.Background(), "user-data", in, Options{Fetch: fakeFetch(map[string]string{
		"http://h/a": "#!/bin/sh\necho 2\n",
		"http://h/b": "#cloud-config-archive\n- '#!/bin/sh\n\n  echo 3'\n",
	})})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Parts {
		names = append(names, p.Filename)
	}
	if diff := cmp.Diff([]string{"part-001", "part-002", "part-003", "part-004"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s\nerrors: %v", diff, res.Errors)
	}
}

// mimeOf builds a MIME message; attachments with an empty filename get none.
func mimeOf(t testing.TB, parts ...Attachment) []byte {
	t.Helper()
	b, err := MakeMIME(parts)
	if err != nil {
		t.Fatal(err)
	}
	// make-mime always writes a filename; drop empty ones so parts get numbers.
	return []byte(strings.ReplaceAll(string(b), "Content-Disposition: attachment; filename=\"\"\n", ""))
}

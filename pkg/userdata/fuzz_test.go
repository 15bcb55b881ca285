package userdata

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedFromTestdata adds every golden input.
func seedFromTestdata(f *testing.F) {
	ins, _ := filepath.Glob("testdata/*/input")
	for _, in := range ins {
		if b, err := os.ReadFile(in); err == nil {
			f.Add(b)
		}
	}
}

var fuzzInstanceData = map[string]any{"v1": map[string]any{"instance_id": "i-1", "local-hostname": "h"}}

func FuzzProcess(f *testing.F) {
	seedFromTestdata(f)
	f.Add([]byte("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n--b\n\n#!/bin/sh\n--b--\n"))
	f.Add([]byte("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"\"\n\n--\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fetch := func(context.Context, string) ([]byte, error) { return b, nil } // includes recurse into the input
		res, err := Process(context.Background(), "user-data", b, Options{Fetch: fetch, InstanceData: fuzzInstanceData, MaxSize: 1 << 20})
		if err != nil || res == nil {
			t.Fatalf("Process: %v", err)
		}
		for _, e := range res.Errors {
			if e == nil || e.Error() == "" {
				t.Fatal("empty error")
			}
			if strings.Contains(e.Error(), "internal error") {
				t.Fatalf("recovered panic: %v", e)
			}
		}
		for _, f := range res.Files("i", false) {
			if bytes.Contains([]byte(f.Path), []byte("/../")) {
				t.Fatalf("path escapes: %s", f.Path)
			}
		}
	})
}

func FuzzArchive(f *testing.F) {
	f.Add([]byte("- a\n- {content: '#!/bin/sh', filename: x, launch-index: 1, X-H: v}\n"))
	f.Add([]byte("- {type: text/x-include-url, content: http://x}\n- 1\n- [a]\n"))
	f.Add([]byte("- {content: !!binary aGVsbG8=}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := append([]byte("#cloud-config-archive\n"), b...)
		if _, err := Process(context.Background(), "user-data", in, Options{}); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzIncludeList(f *testing.F) {
	f.Add([]byte("http://a/b\n# c\n#include-once http://a/c\n\n#include\nhttps://x/y\nftp://z\n"))
	f.Add([]byte("#INCLUDE-ONCE\n\r\n%zz\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fetched int
		fetch := func(_ context.Context, u string) ([]byte, error) {
			fetched++
			return []byte("#!/bin/sh\n"), nil
		}
		in := append([]byte("#include\n"), b...)
		res, err := Process(context.Background(), "user-data", in, Options{Fetch: fetch, IncludeOnceCache: mapCache{}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.InstanceScripts) > fetched+bytes.Count(b, []byte("\n"))+1 {
			t.Fatalf("more scripts (%d) than URLs", len(res.InstanceScripts))
		}
	})
}

func FuzzJinja(f *testing.F) {
	ins, _ := filepath.Glob("testdata/jinja-*/input")
	for _, in := range ins {
		if b, err := os.ReadFile(in); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("## template: jinja\n{% for k, v in v1.items() %}{{ k }}{% endfor %}{{ x | default('y') }}"))
	f.Add([]byte("## template: jinja\n{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1) }}{% set z = namespace(a=1) %}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := append([]byte("## template: jinja\n"), b...)
		if _, _, err := RenderJinja(in, fuzzInstanceData); err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("recovered panic: %v", err)
		}
	})
}

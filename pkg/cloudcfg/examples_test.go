package cloudcfg_test

// TestUpstreamExamples: every cloud-config example cloud-init ships
// (testdata/examples/, copied from doc/examples and doc/module-docs by
// scripts/goldens/examples.sh) gets the same verdict from cloudroot's
// `schema -c FILE -i INSTANCE_DATA` as from upstream's, and, for the valid
// ones, the same merged cloud-config from cloudroot's user-data processing
// (pkg/userdata + cloudcfg.MergePart, as the boot does) as from upstream's
// (<name>.upstream.json, made by that script from cloud-init 26.x). The
// jinja examples render with testdata/examples-instance-data.json on both
// sides.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/cli"
	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

// examplesDir holds the corpus and its goldens; instanceDataPath the
// instance data the jinja examples render with.
const (
	examplesDir      = "testdata/examples"
	instanceDataPath = "testdata/examples-instance-data.json"
)

// upstreamExample is one <name>.upstream.json.
type upstreamExample struct {
	Version      string         `json:"version"`
	SchemaExit   int            `json:"schema_exit"`
	SchemaErrors []string       `json:"schema_errors"`
	Config       map[string]any `json:"config"`
}

func TestUpstreamExamples(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join(examplesDir, "*.upstream.json"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no goldens in testdata/examples (scripts/goldens/examples.sh makes them): %v", err)
	}
	var idata map[string]any
	if b, err := os.ReadFile(instanceDataPath); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &idata); err != nil {
		t.Fatal(err)
	}
	agree := 0
	for _, g := range goldens {
		name := strings.TrimSuffix(filepath.Base(g), ".upstream.json")
		ok := t.Run(name, func(t *testing.T) {
			var want upstreamExample
			b, err := os.ReadFile(g)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("%s: %v", g, err)
			}
			doc, err := os.ReadFile(filepath.Join(examplesDir, name))
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			env := &cli.Env{Root: t.TempDir(), Stdout: &stdout, Stderr: &stderr, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			code := cli.Run(context.Background(), env, []string{"schema", "-c", filepath.Join(examplesDir, name), "-i", instanceDataPath})
			if (code == 0) != (want.SchemaExit == 0) {
				t.Errorf("schema: cloudroot exit %d, cloud-init %s exit %d %q\nstdout:\n%s\nstderr:\n%s",
					code, want.Version, want.SchemaExit, want.SchemaErrors, &stdout, &stderr)
			}
			if want.SchemaExit != 0 {
				return
			}
			got := processedConfig(t, doc, idata)
			if diff := cmp.Diff(want.Config, got); diff != "" {
				t.Errorf("merged cloud-config differs from cloud-init %s (-upstream +cloudroot):\n%s", want.Version, diff)
			}
		})
		if ok {
			agree++
		}
	}
	t.Logf("%d/%d examples agree with upstream", agree, len(goldens))
}

// processedConfig is the cloud-config a boot takes from doc as user-data,
// as JSON values (what the golden holds).
func processedConfig(t *testing.T, doc []byte, idata map[string]any) map[string]any {
	t.Helper()
	res, err := userdata.Process(context.Background(), "user-data", doc, userdata.Options{InstanceData: idata})
	if err != nil {
		t.Fatal(err)
	}
	// A part that is no usable cloud-config is logged and left out, as
	// cloud-init logs and leaves it out (cloud-config-archive.txt's bare
	// strings); the merged config says whether the two agree.
	for _, e := range res.Errors {
		t.Logf("user-data: %v", e)
	}
	merged, err := res.Merged(func(acc map[string]any, c userdata.CloudConfig) map[string]any {
		out, err := cloudcfg.MergePart(acc, cloudcfg.Part{Name: c.Part, Config: c.Config, MergeHow: c.MergeHeader})
		if err != nil {
			t.Errorf("merging %s: %v", c.Part, err)
		}
		return out
	})
	if err != nil {
		t.Errorf("merging: %v", err)
	}
	b, err := json.Marshal(jsonable(merged))
	if err != nil {
		t.Fatalf("merged config as JSON: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonable writes binary values as the goldens do, {"!!binary": base64}:
// pkg/yaml11 reads a !!binary into a string of the decoded bytes, so a
// string that is not UTF-8 is one.
func jsonable(v any) any {
	switch t := v.(type) {
	case string:
		if !utf8.ValidString(t) {
			return map[string]any{"!!binary": base64.StdEncoding.EncodeToString([]byte(t))}
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = jsonable(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = jsonable(e)
		}
		return out
	}
	return v
}

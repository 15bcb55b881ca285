package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestStateRoundTrip(t *testing.T) {
	s := &State{
		Created:    time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC),
		Datasource: Datasource{Name: "NoCloud", Description: "DataSourceNoCloud [seed=/dev/sr0]"},
		InstanceID: "iid-1",
		MetaData:   map[string]any{"instance-id": "iid-1"},
		UserData:   []byte("#cloud-config\n"),
		Timings:    []Timing{{Stage: "early", Start: 1.5, Duration: 0.01}},
	}
	b, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestUnmarshalVersions(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want error
	}{
		{`{"version": 2}`, ErrUnsupportedVersion},
		{`{}`, ErrUnsupportedVersion},
		{`{"version": 1, "instance_id": "x"}`, nil},
	} {
		_, err := Unmarshal([]byte(tc.in))
		if !errors.Is(err, tc.want) {
			t.Errorf("Unmarshal(%s) = %v, want %v", tc.in, err, tc.want)
		}
	}
	if _, err := Unmarshal([]byte("not json")); err == nil {
		t.Error("Unmarshal(garbage) succeeded")
	}
}

func TestStatusShape(t *testing.T) {
	st := NewStatus()
	st.Datasource = "DataSourceNoCloud [seed=/dev/sr0]"
	start, end := 1.25, 2.5
	st.Get(StageInit).Start = &start
	st.Get(StageInit).Finished = &end
	st.Get(StageInit).AddRecoverable("WARNING", "w1")
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	v1 := raw["v1"]
	for _, k := range []string{"datasource", "stage", "init-local", "init", "modules-config", "modules-final"} {
		if _, ok := v1[k]; !ok {
			t.Errorf("status.json lacks v1.%s: %s", k, b)
		}
	}
	if v1["stage"] != nil {
		t.Errorf("stage = %v, want null", v1["stage"])
	}
	var back Status
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := *back.Get(StageInit).Finished; got != 2.5 {
		t.Errorf("finished = %v", got)
	}
	if got := back.Get(StageInit).RecoverableErrors["WARNING"]; len(got) != 1 {
		t.Errorf("recoverable = %v", got)
	}
}

func TestSemaphorePath(t *testing.T) {
	for _, tc := range []struct {
		name string
		freq Frequency
		want string
	}{
		{"runcmd", PerInstance, "/var/lib/cloud/instances/i-1/sem/config_runcmd"},
		{"scripts-per-once", PerOnce, "/var/lib/cloud/sem/config_scripts_per_once.once"},
		{"bootcmd", PerAlways, ""},
		{"consume_data", PerInstance, "/var/lib/cloud/instances/i-1/sem/consume_data"},
	} {
		if got := SemaphorePath("i-1", tc.name, tc.freq); got != tc.want {
			t.Errorf("SemaphorePath(%s, %s) = %q, want %q", tc.name, tc.freq, got, tc.want)
		}
	}
	if got := InstanceDir("a/b"); got != "/var/lib/cloud/instances/a_b" {
		t.Errorf("InstanceDir with slash = %s", got)
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add([]byte(`{"version":1,"instance_id":"i","timings":[{"stage":"x","start":1,"duration":2}]}`))
	f.Add([]byte(`{"version":7}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Unmarshal(b)
		if err != nil {
			return
		}
		out, err := Marshal(s)
		if err != nil {
			t.Fatalf("marshal of a parsed state failed: %v", err)
		}
		if _, err := Unmarshal(out); err != nil {
			t.Fatalf("re-parse failed: %v", err)
		}
	})
}

// TestEncodeIsMarshal: Encode streams the config but writes Marshal's bytes,
// even when the metadata carries a key like the config's placeholder.
func TestEncodeIsMarshal(t *testing.T) {
	for _, cfg := range []map[string]any{nil, {}, {
		"write_files": []any{map[string]any{"path": "/x", "content": strings.Repeat("a<b>\n", 20000)}},
		"runcmd":      []any{"echo", 1, 2.5, true, nil},
	}} {
		s := &State{
			InstanceID: "iid-1",
			MetaData: map[string]any{"config": map[string]any{"cloudroot-config-placeholder-0": nil},
				"x": []any{map[string]any{"cloudroot-config-placeholder-1": nil}}},
			Config:   cfg,
			Timings:  []Timing{{Stage: "init", Start: 1, Duration: 2}},
			Warnings: []string{`{"cloudroot-config-placeholder-2":null}`},
		}
		want, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := Encode(&got, s); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("Encode differs from Marshal:\n got %.300q\nwant %.300q", got.Bytes(), want)
		}
	}
}

// TestRoundTripNumberTypes: the config's numbers come back from the state
// file with the Go types the YAML loader gave them, so a module sees 2
// (not 2.0) where the user wrote `apt_pipelining: 2`, and 2.0 where they
// wrote 2.0. Metadata's integral numbers come back as integers, as
// Python's json.load makes them.
func TestRoundTripNumberTypes(t *testing.T) {
	big1, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	in := &State{
		Config: map[string]any{
			"apt_pipelining": 2, "float": 2.0, "half": 0.5, "huge": 1e16, "tiny": 1e-7,
			"neg": -3, "big": big1, "list": []any{1, 2.0, "3", map[string]any{"n": 4}},
		},
		MetaData: map[string]any{"launch_index": float64(0), "ratio": 1.5},
	}
	b, err := Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{
		"apt_pipelining": 2, "float": 2.0, "half": 0.5, "huge": 1e16, "tiny": 1e-7, "neg": -3,
	} {
		if got := out.Config[k]; got != want {
			t.Errorf("config %s: got %#v (%T), want %#v (%T)", k, got, got, want, want)
		}
	}
	if got, ok := out.Config["big"].(*big.Int); !ok || got.Cmp(big1) != 0 {
		t.Errorf("config big: got %#v", out.Config["big"])
	}
	l := out.Config["list"].([]any)
	if l[0] != 1 || l[1] != 2.0 || l[2] != "3" || l[3].(map[string]any)["n"] != 4 {
		t.Errorf("config list: got %#v", l)
	}
	if got := out.MetaData["launch_index"]; got != 0 {
		t.Errorf("metadata launch_index: got %#v (%T), want int 0", got, got)
	}
	if got := out.MetaData["ratio"]; got != 1.5 {
		t.Errorf("metadata ratio: got %#v", got)
	}
}

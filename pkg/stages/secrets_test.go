package stages

import (
	"context"
	"encoding/json"
	"github.com/cloudroot/cloudroot/pkg/state"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/distro"
)

// TestInstanceDataSecrets: OpenStack's admin_pass, EC2's
// security-credentials and a password in the merged config reach only
// instance-data-sensitive.json (0600), never the world-readable
// instance-data.json.
func TestInstanceDataSecrets(t *testing.T) {
	run := newRoot(t, &fakeRunner{})
	d := &datasource.Data{MetaData: map[string]any{
		"instance-id": "i-1",
		"admin_pass":  "OpenStackAdminPass1",
		// Issue 25 item 7: other names of secrets in meta-data.
		"api-key":     "MetaApiKey0001",
		"db_pass":     "MetaDbPass0002",
		"pwd":         "MetaPwd0003",
		"root_pass":   "MetaRootPass0004",
		"public-keys": []any{"ssh-ed25519 AAAAPublicKeyStays"},
		"iam":         map[string]any{"security-credentials": map[string]any{"r": map[string]any{"SecretAccessKey": "AWSSECRETKEY123"}}},
	}}
	merged := map[string]any{"users": []any{map[string]any{"name": "a", "plain_text_passwd": "UserPass123"}}}
	data := InstanceData(d, distro.Info{ID: "debian"}, merged, map[string]any{}, SysInfo{})
	if err := WriteInstanceData(run, data, merged); err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(filepath.Join(run.Dir(), "run/cloud-init/instance-data.json"))
	if err != nil {
		t.Fatal(err)
	}
	metaSecrets := []string{"OpenStackAdminPass1", "MetaApiKey0001", "MetaDbPass0002", "MetaPwd0003", "MetaRootPass0004"}
	for _, s := range append([]string{"AWSSECRETKEY123", "UserPass123"}, metaSecrets...) {
		if strings.Contains(string(pub), s) {
			t.Errorf("instance-data.json holds %q", s)
		}
	}
	if !strings.Contains(string(pub), "AAAAPublicKeyStays") {
		t.Errorf("instance-data.json lost the public keys")
	}
	sens := filepath.Join(run.Dir(), "run/cloud-init/instance-data-sensitive.json")
	b, err := os.ReadFile(sens)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range metaSecrets {
		if !strings.Contains(string(b), s) {
			t.Errorf("instance-data-sensitive.json lost %q", s)
		}
	}
	if fi, err := os.Stat(sens); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("instance-data-sensitive.json mode: %v %v", fi.Mode(), err)
	}
}

// TestStatusNeverQuotesPasswords: a mistyped password field
// (plain_text_passwd: [..]) is a schema warning in status.json and named by
// its path in the log, and its value appears in no recoverable error, error
// or log line.
func TestStatusNeverQuotesPasswords(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	d := seed(t, "instance-id: i-p\n", "#cloud-config\nusers:\n  - name: ann\n    plain_text_passwd: [Hunter2Secret]\nchpasswd:\n  users:\n    - {name: root, password: [RootSecret99]}\npassword: [TopSecret77]\n")
	var s state.State
	st := state.NewStatus()
	var logs strings.Builder
	o := initOpts(tr, tr, d)
	o.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	Init(context.Background(), o, st.Get(state.StageInit), &s)
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), SchemaWarning) {
		t.Errorf("status has no schema warning: %s", b)
	}
	if !strings.Contains(logs.String(), "plain_text_passwd") {
		t.Errorf("log does not name the mistyped key:\n%s", logs.String())
	}
	for _, sec := range []string{"Hunter2Secret", "RootSecret99", "TopSecret77"} {
		if strings.Contains(string(b), sec) {
			t.Errorf("status.json quotes %q: %s", sec, b)
		}
		if strings.Contains(logs.String(), sec) {
			t.Errorf("log quotes %q", sec)
		}
	}
}

// TestStatusScrubsSecrets: a message that quotes a credential of the state
// (a module echoing a password) reaches status.json and result.json
// without it, and Init tells its caller the credentials (for the log and
// console writers) once the config is merged.
func TestStatusScrubsSecrets(t *testing.T) {
	tr := newRoot(t, &fakeRunner{})
	d := seed(t, "instance-id: i-q\nadmin_pass: MetaAdminPass9\n", "#cloud-config\nusers:\n  - name: ann\n    plain_text_passwd: AnnPass12345\n")
	var s state.State
	st := state.NewStatus()
	o := initOpts(tr, tr, d)
	var told []string
	o.Secrets = func(v []string) { told = v }
	Init(context.Background(), o, st.Get(state.StageInit), &s)
	for _, want := range []string{"AnnPass12345", "MetaAdminPass9"} {
		if !slices.Contains(told, want) {
			t.Errorf("Secrets told %q, want %q among them", told, want)
		}
	}
	st.Secrets = told
	st.Get(state.StageInit).Errors = append(st.Get(state.StageInit).Errors, "chpasswd failed for ann:AnnPass12345")
	st.Get(state.StageInit).AddRecoverable("WARNING", "admin pass MetaAdminPass9 ignored")
	if err := WriteStatus(tr, tr, st); err != nil {
		t.Fatal(err)
	}
	res := &state.Result{Errors: []string{"AnnPass12345"}, RecoverableErrors: map[string][]string{"WARNING": {"MetaAdminPass9"}}, Secrets: told}
	if err := WriteResult(tr, tr, res); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{state.StatusFile, state.ResultFile} {
		b, err := tr.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range []string{"AnnPass12345", "MetaAdminPass9"} {
			if strings.Contains(string(b), sec) {
				t.Errorf("%s holds %q:\n%s", f, sec, b)
			}
		}
		if !strings.Contains(string(b), "redacted") {
			t.Errorf("%s: the messages are gone instead of scrubbed:\n%s", f, b)
		}
	}
	if st.Get(state.StageInit).Errors[0] != "chpasswd failed for ann:AnnPass12345" {
		t.Error("WriteStatus changed the status it was given")
	}
}

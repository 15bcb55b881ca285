package stages

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/secret"
	"github.com/cloudroot/cloudroot/pkg/state"
	"github.com/cloudroot/cloudroot/pkg/target"
)

// NoPreviousInstanceID is what cloud-init writes on a first boot.
const NoPreviousInstanceID = "NO_PREVIOUS_INSTANCE_ID"

// cloudDirs are the /var/lib/cloud subdirectories cloud-init creates.
var cloudDirs = []string{
	"scripts/per-boot", "scripts/per-instance", "scripts/per-once", "scripts/vendor",
	"seed", "instances", "handlers", "sem", "data",
}

// instanceDirs are created in instances/<iid> (stages.py
// _get_instance_subdirs); others (boothooks, data, scripts/vendor) appear
// when something is written into them.
var instanceDirs = []string{"handlers", "scripts", "sem"}

// PreviousInstanceID reads data/instance-id from the target ("" if none).
func PreviousInstanceID(t *target.Root) string {
	b, err := t.ReadFile(state.InstanceIDFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Layout is what WriteInstanceLayout records for an instance.
type Layout struct {
	// IID is the instance-id; Previous is data/instance-id as the boot
	// found it ("" on a first boot).
	IID, Previous string
	// Description is str(DataSource) (datasource.Data.Description).
	Description string
	// Again is true when cloud-init would instancify a second time in its
	// network init stage (InstancifiedTwice).
	Again bool
}

// InstancifiedTwice reports whether cloud-init 26.x instancifies d twice
// in one boot. Its init-local stage instancifies whatever it finds; its
// network init stage restores that datasource from the cache and, unless
// the datasource's dsmode is local, instancifies again
// (cmd/main.py main_init). A source only the network stage finds
// (d.NetworkStage) is instancified there, once.
func InstancifiedTwice(d *datasource.Data) bool {
	return d.Mode != "local" && !d.NetworkStage
}

// WriteInstanceLayout creates cloud-init's /var/lib/cloud tree for l.IID,
// points /var/lib/cloud/instance at it and records the instance in data/,
// leaving what cloud-init's _reflect_cur_instance leaves after its last
// call in the boot: cloudroot does init-local and init in one pass, so a
// second instancify (l.Again) is emulated, not run. Each call reads
// data/instance-id and instances/<iid>/datasource before writing them:
// after two calls previous-instance-id is the current id and
// previous-datasource the current datasource, even on a first boot or a
// new instance; after one, they are what the boot found
// (NO_PREVIOUS_INSTANCE_ID on a first boot; the current datasource when
// this instance has none recorded yet).
func WriteInstanceLayout(t *target.Root, run *target.Root, l Layout) error {
	for _, d := range cloudDirs {
		if err := t.MkdirAll(state.CloudDir+"/"+d, 0o755); err != nil {
			return fmt.Errorf("layout: %w", err)
		}
	}
	idir := state.InstanceDir(l.IID)
	for _, d := range instanceDirs {
		if err := t.MkdirAll(idir+"/"+d, 0o755); err != nil {
			return fmt.Errorf("layout: %w", err)
		}
	}
	if err := t.Symlink(idir, state.InstanceLink); err != nil {
		return fmt.Errorf("layout: %w", err)
	}
	// "%s: %s" % (obj_name(ds), ds): str(ds) starts with the class name.
	class, _, _ := strings.Cut(l.Description, " ")
	dsLine := class + ": " + l.Description
	prevDS := dsLine
	if b, err := t.ReadFile(idir + "/datasource"); err == nil && !l.Again {
		if old := strings.TrimSpace(string(b)); old != "" {
			prevDS = old
		}
	}
	prev := l.Previous
	switch {
	case l.Again:
		prev = l.IID
	case prev == "":
		prev = NoPreviousInstanceID
	}
	files := []struct {
		p    string
		data string
	}{
		{idir + "/datasource", dsLine + "\n"},
		{state.PrevDatasource, prevDS + "\n"},
		{state.InstanceIDFile, l.IID + "\n"},
		{state.PrevInstanceID, prev + "\n"},
	}
	for _, f := range files {
		if err := t.WriteFile(f.p, []byte(f.data), 0o644); err != nil {
			return fmt.Errorf("layout: %w", err)
		}
	}
	if err := run.WriteFile(state.InstanceIDRunFile, []byte(l.IID+"\n"), 0o644); err != nil {
		return fmt.Errorf("layout: %w", err)
	}
	return nil
}

// WriteStatus writes status.json into /var/lib/cloud/data and links
// /run/cloud-init/status.json to it (relative, so it resolves after
// switch_root), as cloud-init does. When the root cannot take it (full,
// read-only), the status is written to /run/cloud-init/status.json itself,
// so that `cloud-init status --wait` still sees the boot end.
func WriteStatus(t, run *target.Root, st *state.Status) error {
	if len(st.Secrets) > 0 {
		c := *st
		c.Stages = make(map[string]*state.StageStatus, len(st.Stages))
		for n, ss := range st.Stages {
			cs := *ss
			cs.Errors = scrubAll(ss.Errors, st.Secrets)
			cs.RecoverableErrors = scrubLevels(ss.RecoverableErrors, st.Secrets)
			c.Stages[n] = &cs
		}
		st = &c
	}
	b, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if err := writeLinked(t, run, state.StatusFile, state.RunStatusLink, append(b, '\n')); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	return nil
}

// WriteResult writes result.json and its /run link (with the same fallback
// to /run as WriteStatus).
func WriteResult(t, run *target.Root, r *state.Result) error {
	if len(r.Secrets) > 0 {
		c := *r
		c.Errors = scrubAll(r.Errors, r.Secrets)
		c.RecoverableErrors = scrubLevels(r.RecoverableErrors, r.Secrets)
		r = &c
	}
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return fmt.Errorf("result: %w", err)
	}
	if err := writeLinked(t, run, state.ResultFile, state.RunResultLink, append(b, '\n')); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	return nil
}

// writeLinked writes b to p in the target and makes link in run a relative
// symlink to it; if p cannot be written, link becomes a file holding b. In
// the initramfs /run is not yet under the target: the link resolves once
// switch_root has moved /run into the new root.
func writeLinked(t, run *target.Root, p, link string, b []byte) error {
	rel := "../.." + p
	err := t.WriteFile(p, b, 0o644)
	if err == nil {
		return run.Symlink(rel, link)
	}
	if rerr := run.Remove(link); rerr != nil {
		return errors.Join(err, rerr)
	}
	if rerr := run.WriteFile(link, b, 0o644); rerr != nil {
		return errors.Join(err, rerr)
	}
	return fmt.Errorf("%w (kept in %s only)", err, link)
}

// ReadStatus reads status.json from the target, or a fresh status.
func ReadStatus(t *target.Root) *state.Status {
	st := state.NewStatus()
	b, err := t.ReadFile(state.StatusFile)
	if err != nil {
		// A root that could not take the status has it in /run only.
		if b, err = t.ReadFile(state.RunStatusLink); err != nil {
			return st
		}
	}
	var s state.Status
	if err := json.Unmarshal(b, &s); err != nil {
		return st
	}
	for _, n := range state.Stages {
		s.Get(n)
	}
	return &s
}

func fsMode(m uint32) fs.FileMode { return fs.FileMode(m) }

// SecretValues are the credentials of a boot's state (its merged config
// and metadata) that status, result, logs and console must not show.
func SecretValues(s *state.State) []string {
	return secret.Values(s.Config, s.MetaData)
}

func scrubAll(msgs, vals []string) []string {
	if msgs == nil {
		return nil
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = secret.Scrub(m, vals)
	}
	return out
}

func scrubLevels(m map[string][]string, vals []string) map[string][]string {
	if m == nil {
		return nil
	}
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = scrubAll(v, vals)
	}
	return out
}

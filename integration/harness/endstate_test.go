package harness

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"
)

// fakeRoot is a RootFS in memory: path -> entry.
type fakeRoot map[string]fakeEntry

type fakeEntry struct {
	fi      FileInfo
	content string
}

func (r fakeRoot) Stat(p string) (FileInfo, error) {
	e, ok := r[p]
	if !ok {
		return FileInfo{}, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
	return e.fi, nil
}

func (r fakeRoot) ReadFile(p string) ([]byte, error) {
	e, ok := r[p]
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fs.ErrNotExist}
	}
	return []byte(e.content), nil
}

func (r fakeRoot) ReadDir(p string) ([]string, error) {
	if _, ok := r[p]; !ok {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: fs.ErrNotExist}
	}
	var names []string
	for q := range r {
		if q != p && path.Dir(q) == p {
			names = append(names, path.Base(q))
		}
	}
	slices.Sort(names)
	return names, nil
}

func (r fakeRoot) file(p string, mode fs.FileMode, uid, gid int, content string) {
	r[p] = fakeEntry{fi: FileInfo{Mode: mode, UID: uid, GID: gid, Size: int64(len(content))}, content: content}
}

func (r fakeRoot) dir(p string, mode fs.FileMode, uid, gid int) {
	r[p] = fakeEntry{fi: FileInfo{Mode: fs.ModeDir | mode, UID: uid, GID: gid}}
}

func (r fakeRoot) link(p, target string) {
	r[p] = fakeEntry{fi: FileInfo{Mode: fs.ModeSymlink | 0o777, LinkTarget: target}}
}

// provisioned is a small provisioned root; lock says whether alice's
// password is locked.
func provisioned(lock bool) fakeRoot {
	r := fakeRoot{}
	for _, d := range []string{"/etc", "/etc/ssh", "/etc/sudoers.d", "/home", "/var/lib/cloud",
		"/var/lib/cloud/data", "/var/lib/cloud/instances", "/var/lib/cloud/instances/iid-1", "/var/lib/cloud/instances/iid-1/sem"} {
		r.dir(d, 0o755, 0, 0)
	}
	r.file("/etc/passwd", 0o644, 0, 0, "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Alice:/home/alice:/bin/bash\n")
	r.file("/etc/group", 0o644, 0, 0, "root:x:0:\nsudo:x:27:alice\nalice:x:1000:\n")
	pw := "!"
	if !lock {
		pw = "$6$salt$hash"
	}
	r.file("/etc/shadow", 0o640, 0, 42, "root:*:20000:0:99999:7:::\nalice:"+pw+":20417:0:99999:7:::\n")
	r.dir("/home/alice", 0o755, 1000, 1000)
	r.dir("/home/alice/.ssh", 0o700, 1000, 1000)
	r.file("/home/alice/.ssh/authorized_keys", 0o600, 1000, 1000, "ssh-ed25519 AAAA alice\n")
	r.file("/etc/sudoers.d/90-cloud-init-users", 0o440, 0, 0, "alice ALL=(ALL) NOPASSWD:ALL\n")
	r.file("/etc/hostname", 0o644, 0, 0, "host\n")
	r.file("/etc/machine-id", 0o444, 0, 0, "0123456789abcdef0123456789abcdef\n")
	r.file("/etc/ssh/ssh_host_ed25519_key", 0o600, 0, 0, "PRIVATE")
	r.file("/etc/ssh/ssh_host_ed25519_key.pub", 0o644, 0, 0, "ssh-ed25519 AAAAkey root@host\n")
	r.file("/etc/ssh/sshd_config", 0o644, 0, 0, "Include /etc/ssh/sshd_config.d/*.conf\n")
	r.link("/var/lib/cloud/instance", "/var/lib/cloud/instances/iid-1")
	r.file("/var/lib/cloud/data/instance-id", 0o644, 0, 0, "iid-1\n")
	r.file("/var/lib/cloud/data/status.json", 0o644, 0, 0,
		`{"v1": {"datasource": "nocloud", "stage": null, "init": {"start": 1.5, "finished": 2.5, "errors": []}, "modules-final": {"start": 3, "finished": null, "errors": ["boom"]}}}`)
	r.file("/var/lib/cloud/data/result.json", 0o644, 0, 0, `{"v1": {"datasource": "nocloud", "errors": []}}`)
	r.file("/var/lib/cloud/instances/iid-1/sem/config_ssh", 0o644, 0, 0, "1234: 1700000000.5\n")
	r.file("/var/lib/cloud/instances/iid-1/obj.pkl", 0o600, 0, 0, "\x80\x04binary")
	return r
}

func TestEndState(t *testing.T) {
	m, err := EndState(provisioned(true), EndStateSpec{Files: []string{"/etc/written.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"user:alice":                              `uid=1000 gid=1000(alice) gecos="Alice" home=/home/alice shell=/bin/bash groups=sudo`,
		"shadow:alice":                            "password=locked min=0 max=99999 warn=7 inactive= expire=",
		"shadow:root":                             "password=no password min=0 max=99999 warn=7 inactive= expire=",
		"group:sudo":                              "gid=27 members=alice",
		"file:/home/alice/.ssh":                   "dir mode=0700 owner=1000:1000",
		"file:/home/alice/.ssh/authorized_keys":   "file mode=0600 owner=1000:1000\nssh-ed25519 AAAA alice\n",
		"file:/etc/sudoers.d/90-cloud-init-users": "file mode=0440 owner=0:0\nalice ALL=(ALL) NOPASSWD:ALL\n",
		"file:/etc/hostname":                      "file mode=0644 owner=0:0\nhost\n",
		"file:/etc/hosts":                         "absent",
		"file:/etc/written.txt":                   "absent",
		"hostkey:ssh_host_ed25519_key":            "file mode=0600 owner=0:0",
		"hostkey:ssh_host_ed25519_key.pub":        "file mode=0644 owner=0:0 type=ssh-ed25519",
		"machine-id":                              "set",
		"cloud:instance":                          "symlink -> /var/lib/cloud/instances/iid-1",
		"cloud:data/instance-id":                  "file mode=0644 owner=0:0\niid-1\n",
		"cloud:data/status.json":                  "file mode=0644 owner=0:0",
		"cloud:instances/iid-1/sem/config_ssh":    "file mode=0644 owner=0:0",
		"cloud:instances/iid-1/obj.pkl":           "file mode=0600 owner=0:0",
		"status:datasource":                       "nocloud",
		"status:init":                             "finished errors=[]",
		"status:modules-final":                    `started, not finished errors=["boom"]`,
		"result:errors":                           "[]",
	}
	for k, v := range want {
		if got, ok := m[k]; !ok || got != v {
			t.Errorf("%s = %q (present %v), want %q", k, got, ok, v)
		}
	}
	for k, v := range m {
		if strings.Contains(v, "PRIVATE") || strings.Contains(v, "AAAAkey") || strings.Contains(v, "$6$") || strings.Contains(v, "1700000000") {
			t.Errorf("%s carries a secret, key or time: %q", k, v)
		}
	}
}

func TestDiffAndAllow(t *testing.T) {
	a, err := EndState(provisioned(true), EndStateSpec{})
	if err != nil {
		t.Fatal(err)
	}
	r := provisioned(false)
	r.file("/var/lib/cloud/instances/iid-1/cloudroot-state.json", 0o600, 0, 0, "{}")
	delete(r, "/var/lib/cloud/instances/iid-1/obj.pkl")
	b, err := EndState(r, EndStateSpec{})
	if err != nil {
		t.Fatal(err)
	}
	diffs := DiffManifests(a, b)
	var keys []string
	for _, d := range diffs {
		keys = append(keys, d.Key)
	}
	wantKeys := []string{"cloud:instances/iid-1/cloudroot-state.json", "cloud:instances/iid-1/obj.pkl", "shadow:alice"}
	if !slices.Equal(keys, wantKeys) {
		t.Fatalf("diff keys = %v, want %v", keys, wantKeys)
	}
	list, err := ParseAllowlist([]byte(`{"comment": "x", "allow": [
		{"key": "cloud:instances/*/obj.pkl", "when": "only-a", "reason": "pickle"},
		{"key": "cloud:instances/*/cloudroot-state.json", "when": "only-a", "reason": "wrong side"},
		{"key": "file:/etc/none", "when": "any", "reason": "stale"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, unused := Allow(diffs, list)
	allowed := map[string]bool{}
	for _, d := range got {
		allowed[d.Key] = d.Allowed
	}
	if !allowed["cloud:instances/iid-1/obj.pkl"] || allowed["cloud:instances/iid-1/cloudroot-state.json"] || allowed["shadow:alice"] {
		t.Errorf("allowed = %v, want only obj.pkl", allowed)
	}
	if len(unused) != 2 {
		t.Errorf("unused = %v, want the wrong-side and the stale entry", unused)
	}
}

func TestParseAllowlistRejects(t *testing.T) {
	for _, tc := range []string{
		`{"allow": [{"key": "x", "when": "sometimes", "reason": "r"}]}`,
		`{"allow": [{"key": "x", "when": "any", "reason": " "}]}`,
		`{"allow": [{"key": "[", "when": "any", "reason": "r"}]}`,
		`{"allow": [{"key": "", "when": "any", "reason": "r"}]}`,
		`not json`,
	} {
		if _, err := ParseAllowlist([]byte(tc)); err == nil {
			t.Errorf("ParseAllowlist(%s) accepted it", tc)
		}
	}
}

func FuzzParseAllowlist(f *testing.F) {
	f.Add([]byte(`{"allow": [{"key": "file:/etc/*", "when": "differs", "reason": "r"}]}`))
	f.Add([]byte(`{"allow": [{"key": "[", "when": "x"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := ParseAllowlist(b)
		if err != nil {
			return
		}
		for _, a := range list {
			if a.Reason == "" || !slices.Contains(allowKinds, a.When) {
				t.Fatalf("accepted %+v", a)
			}
		}
		Allow([]ManifestDiff{{Key: "file:/etc/x", InA: true}}, list)
	})
}

func TestNormalizeVolatile(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"# Created by cloud-init v. 22.4.2 on Wed, 25 Nov 2026 18:14:07 +0000\n\nalice ALL=(ALL) ALL\n",
			"# Created by cloud-init v. VERSION on DATE\n\nalice ALL=(ALL) ALL\n"},
		{"204.08 - Wed, 25 Nov 2026 18:10:35 +0000 - v. 26.2-cloudroot\n", "UPTIME - DATE - v. VERSION\n"},
		{"326 - Wed, 25 Nov 2026 18:16:27 +0000 - v. 22.4.2\n", "UPTIME - DATE - v. VERSION\n"},
		{"keep # Created by cloud-init v. 1 on x\n", "keep # Created by cloud-init v. 1 on x\n"},
		{"plain\n", "plain\n"},
	} {
		if got := NormalizeVolatile(tc.in); got != tc.want {
			t.Errorf("NormalizeVolatile(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

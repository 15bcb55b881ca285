//go:build linux

package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/target"
)

func TestCmdlineSourceConfig(t *testing.T) {
	for _, tc := range []struct {
		cmdline string
		in      map[string]any
		want    map[string]any
	}{
		{"ro", nil, nil},
		{"ds=nocloud;s=http://h/", nil, nil},
		{"ds=ec2;metadata_urls=http://10.0.0.2:50061", nil,
			map[string]any{"Ec2": map[string]any{"metadata_urls": []any{"http://10.0.0.2:50061"}}}},
		{"ds=ec2;metadata_urls=http://a,http://b", map[string]any{"ec2": map[string]any{"timeout": 5}, "NoCloud": map[string]any{}},
			map[string]any{"ec2": map[string]any{"timeout": 5, "metadata_urls": []any{"http://a", "http://b"}}, "NoCloud": map[string]any{}}},
	} {
		b := &boot{log: slog.New(slog.DiscardHandler), cmdline: bootenv.ParseCmdline(tc.cmdline)}
		if got := b.cmdlineSourceConfig(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %#v, want %#v", tc.cmdline, got, tc.want)
		}
	}
}

func TestRAMCheck(t *testing.T) {
	if err := ramCheck(100<<20, 1<<30); err != nil {
		t.Errorf("100 MiB in 1 GiB: %v", err)
	}
	if err := ramCheck(-1, 1<<30); err != nil {
		t.Errorf("unknown size: %v", err)
	}
	err := ramCheck(900<<20, 1<<30)
	if err == nil || !strings.Contains(err.Error(), "only 1024 MiB of RAM is available") {
		t.Errorf("900 MiB in 1 GiB: %v", err)
	}
}

func TestKeepSeed(t *testing.T) {
	root, err := target.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := &boot{log: slog.New(slog.DiscardHandler)}
	d := &datasource.Data{Name: "NoCloud", Mode: "net",
		MetaData: map[string]any{"instance-id": "iid-1", "dsmode": "net", "seedfrom": "http://h/"},
		UserData: []byte("#cloud-config\n")}
	if err := b.keepSeed(root, d); err != nil {
		t.Fatal(err)
	}
	md, err := root.ReadFile(installedSeedDir + "/meta-data")
	if err != nil || string(md) != `{"instance-id":"iid-1"}` {
		t.Errorf("meta-data = %q, %v", md, err)
	}
	if ud, err := root.ReadFile(installedSeedDir + "/user-data"); err != nil || string(ud) != "#cloud-config\n" {
		t.Errorf("user-data = %q, %v", ud, err)
	}
	fi, err := os.Stat(filepath.Join(root.Dir(), installedSeedDir, "user-data"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("user-data mode: %v %v", fi, err)
	}
	// A local seed is not copied again.
	other, _ := target.New(t.TempDir())
	if err := b.keepSeed(other, &datasource.Data{Name: "NoCloud", Mode: "local"}); err != nil || other.Exists(installedSeedDir+"/meta-data") {
		t.Errorf("local seed copied: %v", err)
	}
}

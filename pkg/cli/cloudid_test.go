package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCloudIDGoldens compares cloud-id with upstream's answers for the same
// /run/cloud-init (scripts/goldens/cli.sh).
func TestCloudIDGoldens(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/cloudid/*")
	if len(dirs) == 0 {
		t.Fatal("no cloud-id cases")
	}
	for _, dir := range dirs {
		for _, flag := range []string{"plain", "long", "json"} {
			want, err := os.ReadFile(filepath.Join(dir, "want-"+flag+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			t.Run(filepath.Base(dir)+"/"+flag, func(t *testing.T) {
				args := []string{"cloud-id"}
				if flag != "plain" {
					args = append(args, "--"+flag)
				}
				env, out, errb := newTestEnv(dir)
				code := Run(context.Background(), env, args)
				got := fmt.Sprintf("%sexit: %d\n%s", out, code, errb)
				if diff := cmp.Diff(string(want), got); diff != "" {
					t.Errorf("cloud-id (-upstream +cloudroot):\n%s", diff)
				}
			})
		}
	}
}

// TestCloudIDFollowsStatus: cloud-id says what status says while
// cloud-init is disabled (exit 2) or has not started (exit 3).
func TestCloudIDFollowsStatus(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		code int
	}{{"testdata/status/disabled-generator", 2}, {"testdata/status/disabled-marker-file", 2}, {"testdata/cloudid/not-started", 3}} {
		env, out, _ := newTestEnv(tc.dir)
		code := Run(context.Background(), env, []string{"cloud-id", "--long"})
		senv, sout, _ := newTestEnv(tc.dir)
		Run(context.Background(), senv, []string{"status"})
		if code != tc.code || "status: "+out.String() != sout.String() {
			t.Errorf("%s: cloud-id %q exit %d; status says %q", tc.dir, out, code, sout)
		}
	}
}

func TestCloudIDInstanceDataFlag(t *testing.T) {
	env, out, errb := newTestEnv("testdata/cloudid/no-instance-data")
	code := Run(context.Background(), env, []string{"cloud-id", "-i", "testdata/cloudid/aws-china/run/cloud-init/instance-data.json"})
	if code != 0 || out.String() != "aws-china\n" {
		t.Errorf("-i: exit %d out %q err %q", code, out, errb)
	}
	env, _, errb = newTestEnv("testdata/cloudid/aws-china")
	if code := Run(context.Background(), env, []string{"cloud-id", "--bogus"}); code != 2 || !strings.Contains(errb.String(), "unrecognized arguments: --bogus") {
		t.Errorf("bad flag: exit %d err %q", code, errb)
	}
}

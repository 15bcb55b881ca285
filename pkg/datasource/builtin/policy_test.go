package builtin_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/ec2"
	"github.com/cloudroot/cloudroot/pkg/datasource/internal/dstest"
	"github.com/cloudroot/cloudroot/pkg/datasource/nocloud"
	"github.com/cloudroot/cloudroot/pkg/datasource/openstack"
	"github.com/cloudroot/cloudroot/pkg/imds"
	"github.com/cloudroot/cloudroot/pkg/imds/imdstest"
	"github.com/cloudroot/cloudroot/pkg/internal/testtree"
)

// lateBy is how late the slow services below answer every request: more
// than the old per-source budget allowed over a whole probe, far less than
// the policy's per-request timeout.
const lateBy = 1500 * time.Millisecond

// initramfsEnv is the Env the initramfs's search gives a network source:
// the local budget and the default policy (cmds/cloudroot-init).
func initramfsEnv(cfg map[string]any, cmdline string) datasource.Env {
	pol := imds.DefaultPolicy()
	return datasource.Env{
		NetworkUp: true,
		Budget:    5 * time.Second,
		Policy:    &pol,
		Config:    cfg,
		Cmdline:   bootenv.ParseCmdline(cmdline),
	}
}

// ec2Token answers the IMDSv2 token PUT.
func ec2Token(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != "/latest/api/token" {
		return false
	}
	if r.Method != http.MethodPut {
		http.Error(w, "", http.StatusMethodNotAllowed)
		return true
	}
	w.Write([]byte("slow-token"))
	return true
}

// TestSlowServiceProvisions: a metadata service that answers every request
// 1.5 s late is read in full by Ec2, OpenStack and NoCloud-net under the
// initramfs's policy (the 5 s budget per source used to drop it for None).
func TestSlowServiceProvisions(t *testing.T) {
	ec2Tree := testtree.Dir(t, map[string]string{
		"2021-03-23/meta-data/instance-id":                 "i-0510w510w510w5100",
		"2021-03-23/meta-data/local-hostname":              "ip-10-0-0-9.ec2.internal",
		"2021-03-23/meta-data/hostname":                    "ip-10-0-0-9.ec2.internal",
		"2021-03-23/meta-data/local-ipv4":                  "10.0.0.9",
		"2021-03-23/meta-data/placement/availability-zone": "us-east-1a",
		"2021-03-23/user-data":                             "#cloud-config\nhostname: slow-ec2\n",
	})
	nocloudTree := testtree.Dir(t, map[string]string{
		"seed/meta-data": "instance-id: iid-slow-nocloud\n",
		"seed/user-data": "#cloud-config\nhostname: slow-nocloud\n",
	})
	for _, tc := range []struct {
		name string
		src  datasource.Source
		env  func(url string) datasource.Env
		tree string
		hook func(w http.ResponseWriter, r *http.Request) bool
		iid  string
	}{
		{"Ec2", &ec2.Source{}, func(url string) datasource.Env {
			return initramfsEnv(map[string]any{"Ec2": map[string]any{"metadata_urls": []any{url}}}, "")
		}, ec2Tree, ec2Token, "i-0510w510w510w5100"},
		{"OpenStack", &openstack.Source{}, func(url string) datasource.Env {
			return initramfsEnv(map[string]any{"OpenStack": map[string]any{"metadata_urls": []any{url}}}, "")
		}, "../openstack/testdata/rocky/tree", nil, ""},
		{"NoCloud-net", &nocloud.Source{}, func(url string) datasource.Env {
			return initramfsEnv(nil, "ds=nocloud-net;s="+url+"/seed/")
		}, nocloudTree, nil, "iid-slow-nocloud"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := dstest.Serve(t, tc.tree, dstest.Late(lateBy, tc.hook))
			d, err := tc.src.Get(t.Context(), tc.env(srv.URL))
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if d.InstanceID() == "" || (tc.iid != "" && d.InstanceID() != tc.iid) {
				t.Errorf("instance-id %q, want %q", d.InstanceID(), tc.iid)
			}
			if len(d.UserData) == 0 {
				t.Error("no user-data read from the slow service")
			}
			if n := len(srv.Requests()); n < 3 {
				t.Errorf("%d requests: the slow service was not crawled", n)
			}
		})
	}
}

// TestDeadServiceEndsInTime: with no service at all (refused, or a black
// hole that accepts and never answers), each network source gives up at
// the end of its detection window (refused: after its retries, if
// sooner), as "not found", well before the
// search's deadline; and a service that answers the probe and then hangs
// is cut off by the deadline on the search's context.
func TestDeadServiceEndsInTime(t *testing.T) {
	pol := imds.Policy{Probe: 300 * time.Millisecond, Deadline: 3 * time.Second, Timeout: time.Minute}.Resolve()
	hole := imdstest.NewBlackHole(t)
	for _, tc := range []struct {
		name string
		src  datasource.Source
		cfg  func(url string) map[string]any
	}{
		{"Ec2", &ec2.Source{}, func(url string) map[string]any {
			return map[string]any{"Ec2": map[string]any{"metadata_urls": []any{url}}}
		}},
		{"OpenStack", &openstack.Source{}, func(url string) map[string]any {
			return map[string]any{"OpenStack": map[string]any{"metadata_urls": []any{url}}}
		}},
	} {
		for _, svc := range []struct{ name, url string }{{"refused", dstest.ClosedURL(t)}, {"black hole", hole.URL}} {
			t.Run(tc.name+"/"+svc.name, func(t *testing.T) {
				env := datasource.Env{NetworkUp: true, Budget: time.Hour, Policy: &pol, Config: tc.cfg(svc.url)}
				ctx, cancel := context.WithTimeoutCause(t.Context(), pol.Deadline, imds.ErrDeadline)
				defer cancel()
				_, err := tc.src.Get(ctx, env)
				if !errors.Is(err, datasource.ErrNotFound) {
					t.Fatalf("err = %v, want ErrNotFound", err)
				}
				if svc.name == "black hole" && !errors.Is(err, imds.ErrNoAnswer) {
					t.Errorf("err = %v, want the detection window's ErrNoAnswer", err)
				}
				if ctx.Err() != nil {
					t.Errorf("the search deadline passed (%v): the detection window did not end the probe", context.Cause(ctx))
				}
			})
		}
	}
	if hole.Accepted() == 0 {
		t.Error("the black hole was never tried")
	}

	t.Run("answers then hangs", func(t *testing.T) {
		// The token and version probe answer; everything after hangs.
		tree := testtree.Dir(t, map[string]string{"2021-03-23/meta-data/instance-id": "i-0123456789abcdef0"})
		hang := func(w http.ResponseWriter, r *http.Request) bool {
			if ec2Token(w, r) || r.URL.Path == "/2021-03-23/meta-data/instance-id" {
				return r.URL.Path == "/latest/api/token"
			}
			return dstest.Hang(w, r)
		}
		srv := dstest.Serve(t, tree, hang)
		env := datasource.Env{NetworkUp: true, Policy: &pol, Config: map[string]any{"Ec2": map[string]any{"metadata_urls": []any{srv.URL}}}}
		ctx, cancel := context.WithTimeoutCause(t.Context(), pol.Deadline, imds.ErrDeadline)
		defer cancel()
		_, err := (&ec2.Source{}).Get(ctx, env)
		if err == nil {
			t.Fatal("Get succeeded against a hanging service")
		}
		if !errors.Is(context.Cause(ctx), imds.ErrDeadline) {
			t.Errorf("err = %v; the search deadline did not end it (cause %v)", err, context.Cause(ctx))
		}
	})
}

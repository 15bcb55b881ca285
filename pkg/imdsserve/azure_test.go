package imdsserve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
	"github.com/cloudroot/cloudroot/pkg/datasource/azure"
	"github.com/cloudroot/cloudroot/pkg/internal/testtree"
)

const azureDoc = `{"compute": {"vmId": "11111111-2222-3333-4444-555555555555", "name": "vm1", "userData": "I2Nsb3VkLWNvbmZpZwo=",
  "publicKeys": [{"keyData": "ssh-ed25519 AAAA k"}], "osProfile": {"computerName": "vm1"}}, "network": {"interface": []}}`

var imdsHdr = map[string]string{"Metadata": "true"}

func doBody(t *testing.T, method, url string, hdr map[string]string, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, string(b), resp.Header}
}

func TestAzureIMDS(t *testing.T) {
	dir := testtree.Dir(t, map[string]string{"metadata/instance": azureDoc, "metadata/identity/info": `{"tenantId": "t"}`})
	_, hs, _ := serve(t, Options{Cloud: CloudAzure, Dir: dir})
	u := hs.URL + "/metadata/instance"
	for _, tc := range []struct {
		name, url string
		hdr       map[string]string
		code      int
		body      string
	}{
		{"no header", u + "?api-version=2021-08-01", nil, 400, "Required metadata header not specified"},
		{"header false", u + "?api-version=2021-08-01", map[string]string{"Metadata": "false"}, 400, "Required metadata header"},
		{"proxied", u + "?api-version=2021-08-01", map[string]string{"Metadata": "true", "X-Forwarded-For": "10.0.0.1"}, 400, "X-Forwarded-For"},
		{"no version", u, imdsHdr, 400, "api-version was not specified"},
		{"bad version", u + "?api-version=2000-01-01", imdsHdr, 400, `"newest-versions":["2021-11-15","2021-12-13","2023-07-01"]`},
		{"document", u + "?api-version=2021-08-01&extended=true", imdsHdr, 200, azureDoc},
		{"user data text", u + "/compute/userData?api-version=2021-01-01&format=text", imdsHdr, 200, "I2Nsb3VkLWNvbmZpZwo="},
		{"leaf json", u + "/compute/vmId?api-version=2021-01-01", imdsHdr, 200, `"11111111-2222-3333-4444-555555555555"`},
		{"list index", u + "/compute/publicKeys/0/keyData?api-version=2021-01-01&format=text", imdsHdr, 200, "ssh-ed25519 AAAA k"},
		{"bad index", u + "/compute/publicKeys/01?api-version=2021-01-01", imdsHdr, 404, "Not found"},
		{"object", u + "/compute/osProfile?api-version=2021-01-01", imdsHdr, 200, `{"computerName":"vm1"}`},
		{"missing key", u + "/compute/nope?api-version=2021-01-01", imdsHdr, 404, "Not found"},
		{"other tree file", hs.URL + "/metadata/identity/info?api-version=2021-01-01", imdsHdr, 200, `{"tenantId": "t"}`},
		{"absent file", hs.URL + "/metadata/reprovisiondata?api-version=2019-06-01", imdsHdr, 404, ""},
		{"not metadata", hs.URL + "/latest/meta-data/", imdsHdr, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, "GET", tc.url, tc.hdr)
			if r.code != tc.code || !strings.Contains(r.body, tc.body) {
				t.Errorf("%d %q, want %d containing %q", r.code, r.body, tc.code, tc.body)
			}
		})
	}
	if r := doBody(t, "POST", u+"?api-version=2021-08-01", imdsHdr, "x"); r.code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", r.code)
	}
}

func TestAzureAPIVersions(t *testing.T) {
	dir := testtree.Dir(t, map[string]string{"metadata/instance": azureDoc})
	_, hs, _ := serve(t, Options{Cloud: CloudAzure, Dir: dir, APIVersions: []string{"2019-06-01"}})
	if r := do(t, "GET", hs.URL+"/metadata/instance?api-version=2021-08-01&extended=true", imdsHdr); r.code != 400 {
		t.Errorf("2021-08-01: %d", r.code)
	}
	if r := do(t, "GET", hs.URL+"/metadata/instance?api-version=2019-06-01", imdsHdr); r.code != 200 {
		t.Errorf("2019-06-01: %d", r.code)
	}
}

func TestAzureWireserver(t *testing.T) {
	dir := testtree.Dir(t, map[string]string{"metadata/instance": azureDoc})
	s, hs, log := serve(t, Options{Cloud: CloudAzure, Dir: dir})
	ws := map[string]string{"x-ms-version": "2012-11-30", "x-ms-agent-name": "WALinuxAgent"}
	if r := do(t, "GET", hs.URL+"/machine/?comp=goalstate", nil); r.code != 400 {
		t.Errorf("without x-ms-version: %d", r.code)
	}
	r := do(t, "GET", hs.URL+"/machine/?comp=goalstate", ws)
	gs, err := azure.ParseGoalState([]byte(r.body))
	if r.code != 200 || err != nil {
		t.Fatalf("goal state: %d %v\n%s", r.code, err, r.body)
	}
	want := azure.GoalState{Incarnation: "1", ContainerID: AzureContainerID, InstanceID: "11111111-2222-3333-4444-555555555555._vm1"}
	if *gs != want {
		t.Errorf("goal state %+v, want %+v", *gs, want)
	}
	if r := do(t, "GET", hs.URL+"/machine?comp=health", ws); r.code != http.StatusMethodNotAllowed {
		t.Errorf("GET health: %d", r.code)
	}
	if r := doBody(t, "POST", hs.URL+"/machine?comp=health", ws, "<html>"); r.code != 400 {
		t.Errorf("bad health report: %d", r.code)
	}
	body := string(azure.HealthReport(gs, azure.HealthNotReady, azure.SubstatusProvisionFailed, "it broke"))
	if r := doBody(t, "POST", hs.URL+"/machine?comp=health", ws, body); r.code != 200 {
		t.Fatalf("health: %d %s", r.code, r.body)
	}
	reps := s.HealthReports()
	if len(reps) != 1 {
		t.Fatalf("%d reports", len(reps))
	}
	h := reps[0]
	if h.State != "NotReady" || h.Substatus != "ProvisioningFailed" || h.Description != "it broke" || h.InstanceID != want.InstanceID || h.Incarnation != "1" || string(h.Body) != body {
		t.Errorf("report %+v", h)
	}
	if !strings.Contains(log.String(), "wireserver health report: NotReady (ProvisioningFailed)") {
		t.Errorf("log:\n%s", log)
	}

	// A goal state in the tree wins.
	dir2 := testtree.Dir(t, map[string]string{"machine/goalstate": "<GoalState><Incarnation>9</Incarnation></GoalState>"})
	_, hs2, _ := serve(t, Options{Cloud: CloudAzure, Dir: dir2})
	if r := do(t, "GET", hs2.URL+"/machine/?comp=goalstate", ws); !strings.Contains(r.body, "<Incarnation>9</Incarnation>") {
		t.Errorf("tree goal state: %q", r.body)
	}
}

// TestAzureGoldenRoundTrip serves the Azure datasource's IMDS-only golden
// trees and checks the datasource reads what its want.json says, then
// reports ready to the same server.
func TestAzureGoldenRoundTrip(t *testing.T) {
	dsDir := filepath.Join(testdata, "azure", "testdata")
	cases, err := os.ReadDir(dsDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		dir := filepath.Join(dsDir, c.Name())
		var spec struct {
			APIVersions []string `json:"api_versions"`
			OVF         string   `json:"ovf"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "case.json"))
		if err != nil {
			continue
		}
		if err := json.Unmarshal(b, &spec); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "tree")); err != nil || spec.OVF != "" {
			continue // provisioning media is not served over HTTP
		}
		n++
		t.Run(c.Name(), func(t *testing.T) {
			s, hs, _ := serve(t, Options{Cloud: CloudAzure, Dir: filepath.Join(dir, "tree"), APIVersions: spec.APIVersions, Log: io.Discard})
			env := datasource.Env{DMI: dmiAzure, NetworkUp: true, Budget: 5 * time.Second,
				Config: map[string]any{"Azure": map[string]any{"metadata_url": hs.URL, "wireserver_address": hs.URL}}}
			src := &azure.Source{Sys: fstest.MapFS{}}
			d, err := src.Get(context.Background(), env)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "want.json"))
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			got := map[string]any{"instance_id": d.InstanceID(), "local_hostname": d.LocalHostname(), "meta_data": d.MetaData}
			if len(d.PublicKeys) > 0 {
				got["public_keys"] = d.PublicKeys
			}
			if d.UserData != nil {
				got["user_data"] = string(d.UserData)
			}
			got = normalise(t, got, hs.URL)
			for k, g := range got {
				if !reflect.DeepEqual(want[k], g) {
					t.Errorf("%s = %v\nwant.json has %v", k, g, want[k])
				}
			}
			if err := src.ReportReady(context.Background(), env, d); err != nil {
				t.Fatal(err)
			}
			if reps := s.HealthReports(); len(reps) != 1 || reps[0].State != "Ready" || reps[0].ContainerID != AzureContainerID {
				t.Errorf("health reports %+v", reps)
			}
		})
	}
	if n == 0 {
		t.Fatal("no IMDS-only golden case")
	}
}

var dmiAzure = bootenv.DMI{ChassisAssetTag: azure.ChassisAssetTag, SysVendor: "Microsoft Corporation"}

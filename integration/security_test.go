package integration

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
	"github.com/cloudroot/cloudroot/pkg/imdsserve"
)

// TestEc2RedirectRefused: the IMDS answers user-data with a 302 to another
// host on the guest's network (169.254.169.77, forwarded to a recorder on the
// host). The initramfs's metadata client does not follow it — the IMDSv2
// token never reaches that host, its body never becomes user-data — says
// why, and the boot goes on with the None fallback (issue 15, item 1).
func TestEc2RedirectRefused(t *testing.T) {
	v := newVM(t)
	const (
		ver     = "2021-03-23"
		iid     = "i-0badc0ffee0000001"
		otherIP = "169.254.169.77"
	)
	tree := writeTree(t, map[string]string{
		ver + "/meta-data/instance-id":    iid,
		ver + "/meta-data/local-hostname": "ip-172-31-9-10.eu-west-1.compute.internal",
		ver + "/dynamic/instance-identity/document": `{"accountId": "123456789012", "availabilityZone": "eu-west-1b", "instanceId": "` + iid +
			`", "region": "eu-west-1", "instanceType": "t3.micro", "privateIp": "172.31.9.10", "version": "2017-09-30"}`,
		ver + "/user-data": dsUserData("ec2-sim", true),
	})
	var mu sync.Mutex
	var stolen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stolen = append(stolen, r.Method+" "+r.URL.Path+" token="+r.Header.Get(imdsserve.TokenHeader))
		mu.Unlock()
		w.Write([]byte(dsUserData("attacker", true)))
	}))
	defer other.Close()
	lw := harness.NewLineWriter(func(s string) { t.Logf("%s", s) })
	defer lw.Flush()
	s, err := imdsserve.New(imdsserve.Options{Cloud: imdsserve.CloudEC2, Dir: tree, RequireToken: true, Log: lw})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/user-data") && r.Method == http.MethodGet {
			http.Redirect(w, r, "http://"+otherIP+r.URL.Path, http.StatusFound)
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer imds.Close()
	r := v.boot(harness.BootOptions{
		SMBIOSUUID: ec2UUID,
		Append:     []string{"cloudroot.test.poweroff"},
		GuestFwd: []harness.GuestFwd{
			{GuestIP: imdsIP, GuestPort: 80, HostPort: portOf(t, imds.URL)},
			{GuestIP: otherIP, GuestPort: 80, HostPort: portOf(t, other.URL)},
		},
	})
	wantPoweredOff(t, r)
	mu.Lock()
	for _, q := range stolen {
		t.Errorf("the other host was reached: %s", q)
	}
	mu.Unlock()
	wantConsoleMatch(t, r, `redirect to another origin refused`)
	d := v.image()
	if h, ok := d.readOpt("/etc/imds/written.txt"); ok {
		t.Errorf("/etc/imds/written.txt exists (%q): redirected user-data was provisioned", h)
	}
	if h := d.hostname(); h == "attacker" {
		t.Errorf("hostname %q came from the other host", h)
	}
	logText, _ := d.readOpt("/var/log/cloud-init.log")
	if !strings.Contains(logText, "redirect to another origin refused") {
		t.Errorf("/var/log/cloud-init.log does not say the redirect was refused")
	}
}

// portOf is the port of an httptest server's URL.
func portOf(t *testing.T, u string) int {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(pu.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

package integration

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
	"github.com/cloudroot/cloudroot/pkg/userdata"
)

// The user-data of TestUserDataPipeline. Every part leaves its own trace;
// the cloud-config parts after the first say merge_how so that their
// write_files and runcmd are appended to the first part's, as cloud-init
// merges them.
const (
	udIID      = "iid-userdata-001"
	udMetaHost = "ud-meta" // meta-data local-hostname, read by the jinja part
	udHostname = "udpipe"  // the first cloud-config part's hostname

	// imdsIP is an address inside the guest's QEMU user network
	// (restrict=on, net=169.254.0.0/16): slirp's guestfwd turns the
	// guest's connections to it into connections to the host's 127.0.0.1
	// server (BootOptions.GuestFwd). The host never connects to it.
	imdsIP = "169.254.169.254"

	udAppend = "merge_how: 'list(append)+dict(recurse_array)+str()'\n"

	udBase = `#cloud-config
hostname: ` + udHostname + `
write_files:
  - path: /etc/ud/base.txt
    content: |
      from the base part
runcmd:
  - echo base-runcmd >> /var/log/ud-runcmd.log
`
	udInclude = `#include
http://` + imdsIP + `/include.yaml
`
	// udIncluded is served at /include.yaml.
	udIncluded = `#cloud-config
` + udAppend + `write_files:
  - path: /etc/from-include
    content: |
      fetched over http
runcmd:
  - echo include-runcmd >> /var/log/ud-runcmd.log
`
	udJinja = `## template: jinja
#cloud-config
` + udAppend + `write_files:
  - path: /etc/ud/jinja.txt
    content: |
      iid={{ v1.instance_id }} host={{ ds.meta_data.local_hostname }}
runcmd:
  - echo jinja-runcmd-{{ v1.instance_id }} >> /var/log/ud-runcmd.log
`
	udArchive = `#cloud-config-archive
- type: text/x-shellscript
  filename: archive-script.sh
  content: |
    #!/bin/sh
    echo "archive script as $(id -un)" > /var/log/ud-archive.log
- type: text/cloud-config
  content: |
    ` + udAppend + `    write_files:
      - path: /etc/ud/archive.txt
        content: from the archive
`
	udBoothookBody = `#!/bin/sh
echo "boothook $INSTANCE_ID" >> /var/log/ud-boothook.log
`
	udBoothook    = "#cloud-boothook\n" + udBoothookBody
	udPerInstance = `#!/bin/sh
echo "per-instance script" >> /var/log/ud-per-instance.log
`
)

// udPayload is the whole user-data: a MIME message of every part, gzipped.
func udPayload(t *testing.T) (mime, gz []byte) {
	t.Helper()
	mime, err := userdata.MakeMIME([]userdata.Attachment{
		{Filename: "base.yaml", Type: "cloud-config", Content: []byte(udBase)},
		{Filename: "include.txt", Type: "x-include-url", Content: []byte(udInclude)},
		{Filename: "template.j2", Type: "jinja2", Content: []byte(udJinja)},
		{Filename: "archive.yaml", Type: "cloud-config-archive", Content: []byte(udArchive)},
		{Filename: "boothook.sh", Type: "cloud-boothook", Content: []byte(udBoothook)},
		{Filename: "per-instance.sh", Type: "x-shellscript-per-instance", Content: []byte(udPerInstance)},
	})
	if err != nil {
		t.Fatalf("MakeMIME: %v", err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(mime); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return mime, b.Bytes()
}

// needTools skips (fails under CLOUDROOT_INTEGRATION=1) without the host
// programs a test needs beyond artifacts'.
func needTools(t *testing.T, names ...string) {
	t.Helper()
	if miss := harness.HaveTools(names...); len(miss) > 0 {
		msg := fmt.Sprintf("tools missing: %s (`just deps`)", strings.Join(miss, ", "))
		if os.Getenv(EnvIntegration) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; set " + EnvIntegration + "=1 to make this a failure")
	}
}

// Console lines of cloudroot-init's ephemeral network for #include.
const (
	ephemeralUpMsg   = "ephemeral network up"
	ephemeralDownMsg = "ephemeral network released"
)

// TestUserDataPipeline: a gzipped MIME user-data combining cloud-config,
// #include (served from 127.0.0.1 through guestfwd, fetched over an
// ephemeral DHCP network in the initramfs), a jinja template, a
// cloud-config-archive, a boothook and a per-instance script produces the
// files and effects cloud-init's would (issue #3's acceptance).
func TestUserDataPipeline(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	needTools(t, "nc")

	srv, err := harness.ServeFiles(map[string][]byte{"/include.yaml": []byte(udIncluded)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	// The root's resolv.conf before the boot: the ephemeral network of
	// the initramfs must not leave its DNS configuration in the target.
	pristine, err := harness.OpenImage(v.disk)
	if err != nil {
		t.Fatal(err)
	}
	resolvBefore, resolvErr := pristine.ReadFile("/etc/resolv.conf")
	resolvExisted := resolvErr == nil

	_, gz := udPayload(t)
	seed := v.seed(map[string][]byte{"meta-data": meta(udIID, udMetaHost), "user-data": gz}, harness.SeedISO)
	r := v.boot(harness.BootOptions{
		Seed: seed, SeedKind: harness.SeedCDROMSCSI,
		Append:   []string{"cloudroot.test.poweroff"},
		GuestFwd: imdsFwd(srv.Port()),
	})
	t.Logf("host server requests: %s\n%s", srv, srv.Log())
	wantPoweredOff(t, r)
	wantConsole(t, r, "cloudroot-rootfs: final stage rc=0")

	// The include came from our server, exactly once, and nothing else
	// was asked of it.
	if n := srv.Count("/include.yaml"); n != 1 {
		t.Errorf("/include.yaml fetched %d time(s), want exactly 1", n)
	}
	if n := srv.Total(); n != srv.Count("/include.yaml") {
		t.Errorf("the host server got %d request(s) (%s), want only /include.yaml", n, srv)
	}

	// The ephemeral network: up for the include, down before switch_root.
	up := strings.Index(r.Console, ephemeralUpMsg)
	down := strings.Index(r.Console, ephemeralDownMsg)
	sw := strings.LastIndex(r.Console, "switching root")
	switch {
	case up < 0:
		t.Errorf("console lacks %q", ephemeralUpMsg)
	case down < 0:
		t.Errorf("console lacks %q", ephemeralDownMsg)
	case down < up:
		t.Errorf("%q comes before %q", ephemeralDownMsg, ephemeralUpMsg)
	case sw >= 0 && sw < down:
		t.Errorf("%q comes after switching root", ephemeralDownMsg)
	}
	if n := strings.Count(r.Console, ephemeralUpMsg); n > 1 {
		t.Errorf("the ephemeral network came up %d times, want once", n)
	}

	d := v.image()
	const (
		idir    = "/var/lib/cloud/instances/" + udIID
		perInst = "/var/lib/cloud/scripts/per-instance/per-instance.sh"
	)
	d.wantContent(harness.InstanceIDPath, udIID+"\n")
	if h := d.hostname(); h != udHostname {
		t.Errorf("/etc/hostname = %q, want %q (the cloud-config part's hostname)", h, udHostname)
	}

	// cloud-config (base), the include, the jinja part and the archive's
	// cloud-config entry, merged: every write_files entry is there.
	d.wantContent("/etc/ud/base.txt", "from the base part\n")
	d.wantContent("/etc/from-include", "fetched over http\n")
	d.wantContent("/etc/ud/jinja.txt", "iid="+udIID+" host="+udMetaHost+"\n")
	d.wantContent("/etc/ud/archive.txt", "from the archive")
	// runcmd: the base's first, then the include's and the template's
	// appended in part order.
	if l := d.wantLines("/var/log/ud-runcmd.log", 3); len(l) == 3 {
		want := []string{"base-runcmd", "include-runcmd", "jinja-runcmd-" + udIID}
		for i := range want {
			if l[i] != want[i] {
				t.Errorf("ud-runcmd.log line %d = %q, want %q (all: %q)", i+1, l[i], want[i], l)
			}
		}
	}
	// The merged cloud-config as cloud-init keeps it holds the rendered
	// template, not the template.
	cc := d.read(idir + "/cloud-config.txt")
	// Laid out as cloud-init's handler writes it: the parts it merged
	// named above the document.
	if !strings.HasPrefix(cc, "#cloud-config\n\n# from ") || !strings.HasSuffix(cc, "\n...\n") {
		t.Errorf("%s/cloud-config.txt is not laid out as cloud-init's (# from N files, ---, ...):\n%s", idir, cc)
	}
	for _, s := range []string{"/etc/from-include", "/etc/ud/jinja.txt", "iid=" + udIID, "/etc/ud/archive.txt"} {
		if !strings.Contains(cc, s) {
			t.Errorf("%s/cloud-config.txt lacks %q:\n%s", idir, s, cc)
		}
	}
	for _, s := range []string{"{{", "CI_MISSING_JINJA_VAR", "## template"} {
		if strings.Contains(cc, s) {
			t.Errorf("%s/cloud-config.txt has %q: the template was not rendered:\n%s", idir, s, cc)
		}
	}

	// The boothook: written without its header under the instance's
	// boothooks, run once (one boot) with INSTANCE_ID.
	d.wantContent(idir+"/boothooks/boothook.sh", udBoothookBody)
	d.wantMode(idir+"/boothooks/boothook.sh", 0o700, 0, 0)
	if l := d.wantLines("/var/log/ud-boothook.log", 1); len(l) == 1 && l[0] != "boothook "+udIID {
		t.Errorf("ud-boothook.log = %q, want %q", l[0], "boothook "+udIID)
	}

	// The archive's script is a user script (instance/scripts, run by
	// scripts_user in the final stage, as root).
	d.wantContent(idir+"/scripts/archive-script.sh", "#!/bin/sh\necho \"archive script as $(id -un)\" > /var/log/ud-archive.log\n")
	d.wantMode(idir+"/scripts/archive-script.sh", 0o700, 0, 0)
	d.wantContent("/var/log/ud-archive.log", "archive script as root\n")

	// The per-instance script lands in scripts/per-instance and ran once.
	d.wantContent(perInst, udPerInstance)
	d.wantMode(perInst, 0o700, 0, 0)
	d.wantLines("/var/log/ud-per-instance.log", 1)

	// No header or template leaked into a script.
	for _, p := range []string{idir + "/boothooks/boothook.sh", idir + "/scripts/archive-script.sh", perInst} {
		if s, ok := d.readOpt(p); ok && (strings.Contains(s, "#cloud-boothook") || strings.Contains(s, "{{")) {
			t.Errorf("%s kept a header or template:\n%s", p, s)
		}
	}

	// The raw user-data is kept as given (gzipped), as cloud-init keeps it.
	if ud, ok := d.readOpt(idir + "/user-data.txt"); !ok {
		t.Errorf("%s/user-data.txt does not exist", idir)
	} else if !bytes.Equal([]byte(ud), gz) {
		t.Errorf("%s/user-data.txt (%d bytes) is not the gzipped user-data given (%d bytes)", idir, len(ud), len(gz))
	}

	// status.json: every stage done, no error; nothing about the include,
	// the template or an unsupported part among the warnings either.
	s := d.status()
	d.wantStagesDone(s, true)
	for _, e := range s.AllErrors() {
		le := strings.ToLower(e)
		for _, bad := range []string{"include", "not supported", "unsupported", "jinja", "template", "boothook", "archive", "unhandled"} {
			if strings.Contains(le, bad) {
				t.Errorf("status.json reports a user-data problem (%q): %s", bad, e)
				break
			}
		}
	}

	// The target did not keep the ephemeral network's DNS configuration.
	resolvAfter, err := d.im.ReadFile("/etc/resolv.conf")
	switch {
	case resolvExisted && err != nil:
		t.Errorf("/etc/resolv.conf was in the image and is gone after the boot: %v", err)
	case !resolvExisted && err == nil:
		t.Errorf("/etc/resolv.conf was created in the target by the boot:\n%s", resolvAfter)
	case resolvExisted && !bytes.Equal(resolvBefore, resolvAfter):
		t.Errorf("/etc/resolv.conf changed:\nbefore:\n%s\nafter:\n%s", resolvBefore, resolvAfter)
	}
}

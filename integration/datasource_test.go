package integration

// Network datasources against the metadata-service simulator
// (pkg/imdsserve), started in-process on 127.0.0.1 and reached by the guest
// at 169.254.169.254:80 through BootOptions.GuestFwd (issue #4's
// acceptance). The DMI the guest sees (-smbios type=1) makes pkg/identify
// pick the datasource.

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/integration/harness"
	"github.com/cloudroot/cloudroot/pkg/imdsserve"
	"github.com/cloudroot/cloudroot/pkg/target"
)

const (
	// dsKey is the public key every metadata tree gives the default user.
	dsKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIImdsSimulatorKeyForDebian imds@cloudroot"
	// ec2UUID starts with "ec2": pkg/identify (and the Ec2 source) take
	// the machine for AWS.
	ec2UUID = "ec2a1b2c-3d4e-4f50-8a6b-7c8d9e0f1a2b"
)

// dsUserData is the cloud-config every metadata tree serves as user-data;
// name is the hostname and the tag written by write_files and runcmd.
func dsUserData(name string, powerOff bool) string {
	ud := `#cloud-config
hostname: ` + name + `
ssh_genkeytypes: [ed25519]
write_files:
  - path: /etc/imds/written.txt
    content: |
      written for ` + name + `
runcmd:
  - echo "runcmd ` + name + ` $(cat /var/lib/cloud/data/instance-id)" >> /var/log/imds-runcmd.log
`
	if powerOff {
		ud += "power_state:\n  mode: poweroff\n  delay: now\n"
	}
	return ud
}

// writeTree writes files (tree path → content) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startIMDS serves tree as cloud on 127.0.0.1 (an ephemeral port), logging
// each request into the test log.
func startIMDS(t *testing.T, cloud, tree string, requireToken bool) (*imdsserve.Server, *imdsserve.Running) {
	t.Helper()
	needTools(t, "nc")
	lw := harness.NewLineWriter(func(s string) { t.Logf("%s", s) })
	s, err := imdsserve.New(imdsserve.Options{Cloud: cloud, Dir: tree, RequireToken: requireToken, Log: lw})
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.Start("127.0.0.1:0")
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = run.Close()
		_ = s.Close()
		lw.Flush()
	})
	return s, run
}

// imdsFwd maps the guest's 169.254.169.254:80 (inside QEMU's restricted
// user network) to a server on the host's 127.0.0.1:port.
func imdsFwd(port int) []harness.GuestFwd {
	return []harness.GuestFwd{{GuestIP: imdsIP, GuestPort: 80, HostPort: port}}
}

// wantEphemeralNet checks the console says the initramfs brought its
// network up once and released it before switching root.
func wantEphemeralNet(t *testing.T, r *harness.Run) {
	t.Helper()
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
}

// provisioned is what a boot from a metadata service must leave.
type provisioned struct {
	iid      string // the instance-id the datasource reports
	hostname string // user-data's hostname
	dsName   string // "Ec2", "OpenStack", "GCE"
}

// wantProvisioned checks the root after a boot served by the simulator.
func wantProvisioned(t *testing.T, v *vm, r *harness.Run, w provisioned) {
	t.Helper()
	wantPoweredOff(t, r)
	wantEphemeralNet(t, r)
	d := v.image()
	if h := d.hostname(); h != w.hostname {
		t.Errorf("/etc/hostname = %q, want %q (user-data)", h, w.hostname)
	}
	d.wantContent("/etc/imds/written.txt", "written for "+w.hostname+"\n")
	if l := d.wantLines("/var/log/imds-runcmd.log", 1); len(l) == 1 && l[0] != "runcmd "+w.hostname+" "+w.iid {
		t.Errorf("imds-runcmd.log = %q, want %q", l[0], "runcmd "+w.hostname+" "+w.iid)
	}
	d.wantContent(harness.InstanceIDPath, w.iid+"\n")
	d.wantLink(harness.InstanceLinkPath, "/var/lib/cloud/instances/"+w.iid)
	d.wantContains("/var/lib/cloud/instance/datasource", "DataSource"+w.dsName)

	pw := d.passwd()
	deb, ok := pw["debian"]
	if !ok {
		t.Errorf("default user debian not in /etc/passwd")
	} else {
		d.wantMode("/home/debian/.ssh/authorized_keys", 0o600, deb.UID, deb.GID)
		d.wantContains("/home/debian/.ssh/authorized_keys", dsKey)
	}

	s := d.status()
	d.wantStagesDone(s, true)
	if !strings.Contains(s.Datasource, "DataSource"+w.dsName) {
		t.Errorf("status.json datasource = %q, want it to name DataSource%s", s.Datasource, w.dsName)
	}
	if res, err := d.im.Result(); err != nil {
		t.Errorf("result.json: %v", err)
	} else if len(res.Errors) > 0 {
		t.Errorf("result.json errors: %q", res.Errors)
	}
	if t.Failed() {
		if b, err := d.im.ReadFile(harness.StatusPath); err == nil {
			t.Logf("status.json:\n%s", b)
		}
	}
}

// TestEc2IMDS: an AWS machine (DMI UUID ec2…) reads the EC2 IMDS with an
// IMDSv2 token and is provisioned from it.
func TestEc2IMDS(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	const (
		ver = "2021-03-23"
		iid = "i-0aaa1111bbbb2222c"
	)
	tree := writeTree(t, map[string]string{
		ver + "/meta-data/instance-id":                 iid,
		ver + "/meta-data/local-hostname":              "ip-172-31-9-9.eu-west-1.compute.internal",
		ver + "/meta-data/hostname":                    "ip-172-31-9-9.eu-west-1.compute.internal",
		ver + "/meta-data/instance-type":               "t3.micro",
		ver + "/meta-data/ami-id":                      "ami-0123456789abcdef0",
		ver + "/meta-data/local-ipv4":                  "172.31.9.9",
		ver + "/meta-data/placement/availability-zone": "eu-west-1b",
		ver + "/meta-data/public-keys/_index":          "0=imds-key",
		ver + "/meta-data/public-keys/0/openssh-key":   dsKey + "\n",
		ver + "/dynamic/instance-identity/document": `{"accountId": "123456789012", "availabilityZone": "eu-west-1b", "instanceId": "` + iid +
			`", "region": "eu-west-1", "instanceType": "t3.micro", "privateIp": "172.31.9.9", "version": "2017-09-30"}`,
		ver + "/user-data": dsUserData("ec2-sim", true),
	})
	srv, run := startIMDS(t, imdsserve.CloudEC2, tree, true)
	r := v.boot(harness.BootOptions{SMBIOSUUID: ec2UUID, GuestFwd: imdsFwd(run.Port())})
	t.Logf("IMDS requests:\n%s", srv.Log())
	wantProvisioned(t, v, r, provisioned{iid: iid, hostname: "ec2-sim", dsName: "Ec2"})
	// Console progress over the network: the DHCP wait and the metadata
	// attempt with their budgets, then the banner.
	wantConsoleMatch(t, r, `network: DHCP on \S.* \(up to \d+s\)`)
	wantConsoleMatch(t, r, `datasource Ec2: asking the metadata service \(up to \d+s to answer, search ends within \d+m?\d*s?\)`)
	wantConsoleMatch(t, r, `\[  OK  \] cloudroot: provisioned; datasource DataSourceEc2Local; instance-id `+iid+`; [0-9.]+s since boot`)

	if n := srv.Count("PUT", imdsserve.TokenPath); n < 1 {
		t.Errorf("the IMDS saw no token PUT")
	}
	for _, q := range srv.Requests() {
		if q.Status == 401 {
			t.Errorf("%s %s was refused (401): the guest did not send the token", q.Method, q.Path)
		}
	}
	if srv.Count("GET", "/"+ver+"/dynamic/instance-identity/document") == 0 {
		t.Errorf("the instance identity document was not read (AWS)")
	}
}

// TestOpenStackIMDS: DMI product "OpenStack Nova" reads the Nova metadata
// service.
func TestOpenStackIMDS(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	const uuid = "5c1e8f3a-9b2d-4e7f-8a6c-1d2e3f4a5b6c"
	md, _ := json.Marshal(map[string]any{
		"uuid":              uuid,
		"hostname":          "os-meta.novalocal",
		"name":              "os-meta",
		"availability_zone": "nova",
		"launch_index":      0,
		"project_id":        "4b1c6e0f9a2d4e7b8c3f5a6d7e8f9a0b",
		"public_keys":       map[string]string{"imds-key": dsKey + "\n"},
		"keys":              []map[string]string{{"name": "imds-key", "type": "ssh", "data": dsKey + "\n"}},
		"meta":              map[string]string{"role": "test"},
	})
	tree := writeTree(t, map[string]string{
		"openstack/2018-08-27/meta_data.json":   string(md),
		"openstack/2018-08-27/user_data":        dsUserData("os-sim", false),
		"openstack/2018-08-27/vendor_data.json": "{}",
		"latest/meta-data/instance-id":          "i-00000042",
		"latest/meta-data/local-hostname":       "os-meta.novalocal",
	})
	srv, run := startIMDS(t, imdsserve.CloudOpenStack, tree, false)
	r := v.boot(harness.BootOptions{SMBIOSProduct: "OpenStack Nova", GuestFwd: imdsFwd(run.Port()), Append: []string{"cloudroot.test.poweroff"}})
	t.Logf("metadata service requests:\n%s", srv.Log())
	wantProvisioned(t, v, r, provisioned{iid: uuid, hostname: "os-sim", dsName: "OpenStack"})
	// openstack/latest is served from the newest dated directory; the
	// source may read either.
	if srv.Count("GET", "/openstack/2018-08-27/meta_data.json")+srv.Count("GET", "/openstack/latest/meta_data.json") == 0 {
		t.Errorf("meta_data.json was not read")
	}
}

// TestGCEIMDS: DMI product "Google Compute Engine" reads the GCE metadata
// server. metadata.google.internal does not resolve in the initramfs (no
// DNS under restrict=on): the source falls back to 169.254.169.254 within
// its budget — inside the guest's restricted user network, forwarded by
// guestfwd to the simulator on the host's 127.0.0.1.
func TestGCEIMDS(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	const id = "4520031799277581759"
	tree := writeTree(t, map[string]string{
		"computeMetadata/v1/instance/id":       id,
		"computeMetadata/v1/instance/hostname": "gce-meta.c.cloudroot-test.internal",
		"computeMetadata/v1/instance/zone":     "projects/123456789012/zones/europe-west1-b",
		// Attributes as files: the simulator builds ?recursive=true.
		"computeMetadata/v1/instance/attributes/ssh-keys":      "debian:" + dsKey + "\n",
		"computeMetadata/v1/instance/attributes/user-data":     dsUserData("gce-sim", false),
		"computeMetadata/v1/project/attributes/enable-oslogin": "FALSE",
	})
	srv, run := startIMDS(t, imdsserve.CloudGCE, tree, false)
	r := v.boot(harness.BootOptions{SMBIOSProduct: "Google Compute Engine", GuestFwd: imdsFwd(run.Port()), Append: []string{"cloudroot.test.poweroff"}})
	t.Logf("metadata server requests:\n%s", srv.Log())
	wantProvisioned(t, v, r, provisioned{iid: id, hostname: "gce-sim", dsName: "GCE"})
	for _, q := range srv.Requests() {
		if q.Status == 403 {
			t.Errorf("%s %s was refused (403): no Metadata-Flavor header", q.Method, q.Path)
		}
	}
	if srv.Count("GET", "/computeMetadata/v1/instance/attributes/") == 0 {
		t.Errorf("the instance attributes were not read")
	}
}

// TestUnreachableIMDS: Ec2 is detected but nothing answers at
// 169.254.169.254 inside the guest (no guestfwd: QEMU's restrict=on user
// network drops the packets, nothing leaves the host). The boot still
// completes, unprovisioned, and says why.
func TestUnreachableIMDS(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	r := v.boot(harness.BootOptions{SMBIOSUUID: ec2UUID, Append: []string{"cloudroot.test.poweroff"}})
	// Within the boot timeout; the console's own timings tell how long the
	// datasource took (no wall-clock assertion). As in cloud-init, the
	// datasource_list ds-identify wrote ends in None: the boot goes on
	// with the fallback datasource and says so.
	wantPoweredOff(t, r)
	wantEphemeralNet(t, r)
	wantConsole(t, r, "no datasource found: using the None fallback", "cloudroot-rootfs: final stage",
		"cloudroot-rootfs| status: done", "cloudroot-rootfs| extended_status: degraded done",
		"cloudroot-rootfs| detail: DataSourceNone", "Used fallback datasource")
	wantConsoleMatch(t, r, `datasource not found.*Ec2`)

	d := v.image()
	d.wantLink(harness.InstanceLinkPath, "/var/lib/cloud/instances/iid-datasource-none")
	d.wantContent(harness.InstanceIDPath, "iid-datasource-none\n")
	if h, ok := d.readOpt("/etc/imds/written.txt"); ok {
		t.Errorf("/etc/imds/written.txt exists (%q): something was provisioned", h)
	}
	s := d.status()
	if s.Datasource != "DataSourceNone" {
		t.Errorf("status.json datasource = %q, want DataSourceNone", s.Datasource)
	}
	d.wantStagesDone(s, true) // warnings (recoverable), no errors
	logText, _ := d.readOpt("/var/log/cloud-init.log")
	for _, want := range []string{"datasource not found", "no metadata service answered", "using the None fallback"} {
		if !strings.Contains(logText, want) {
			t.Errorf("/var/log/cloud-init.log lacks %q", want)
		}
	}
}

// TestConfigDrive: an OpenStack config drive (ISO9660 labelled config-2 on
// an AHCI CD-ROM), read without any network: meta_data.json, user_data,
// vendor_data.json and an injected file from content/0000.
func TestConfigDrive(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	const uuid = "83679162-1378-4288-a2d4-70e13ec132aa"
	md, _ := json.Marshal(map[string]any{
		"uuid":              uuid,
		"hostname":          "cd-meta.novalocal",
		"name":              "cd-meta",
		"availability_zone": "nova",
		"launch_index":      0,
		"public_keys":       map[string]string{"imds-key": dsKey + "\n"},
		"files":             []map[string]string{{"path": "/etc/injected/by-config-drive.txt", "content_path": "/content/0000"}},
	})
	seed := v.seed(map[string][]byte{
		"openstack/2018-08-27/meta_data.json":   md,
		"openstack/2018-08-27/user_data":        []byte(dsUserData("cd-sim", true)),
		"openstack/2018-08-27/vendor_data.json": []byte(`{"cloud-init": "#cloud-config\nbootcmd:\n  - echo vendor > /var/log/cd-vendor.log\n"}`),
		"openstack/content/0000":                []byte("injected\n"),
	}, harness.SeedConfigDrive)
	r := v.boot(harness.BootOptions{Seed: seed, SeedKind: harness.SeedCDROMAHCI})
	wantPoweredOff(t, r)
	if strings.Contains(r.Console, ephemeralUpMsg) {
		t.Errorf("the network came up for a config drive")
	}
	d := v.image()
	if h := d.hostname(); h != "cd-sim" {
		t.Errorf("/etc/hostname = %q, want cd-sim (user-data)", h)
	}
	d.wantContent(harness.InstanceIDPath, uuid+"\n")
	d.wantContent("/etc/imds/written.txt", "written for cd-sim\n")
	d.wantContent("/etc/injected/by-config-drive.txt", "injected\n")
	d.wantLines("/var/log/imds-runcmd.log", 1)
	d.wantContains("/var/lib/cloud/instance/datasource", "DataSourceConfigDrive")
	d.wantContains("/home/debian/.ssh/authorized_keys", dsKey)
	s := d.status()
	d.wantStagesDone(s, true)
	if st, err := d.im.State(); err != nil {
		t.Errorf("state file: %v", err)
	} else if st.Datasource.Subplatform == "" || !strings.HasPrefix(st.Datasource.Subplatform, "config-disk (/dev/") {
		t.Errorf("subplatform = %q, want config-disk (/dev/…)", st.Datasource.Subplatform)
	}
}

// TestAzure: a machine with Azure's chassis asset tag, its provisioning
// media (ovf-env.xml on an ISO) and IMDS plus wireserver served by
// `cloudroot imds serve --cloud azure` through guestfwd. The admin user
// gets the hashed OVF password, CustomData is the user-data, the OVF copy
// kept in /var/lib/waagent has the password redacted, and the instance is
// reported ready to the wireserver.
func TestAzure(t *testing.T) {
	t.Parallel()
	v := newVM(t)
	const (
		uuid     = "3f2a1b0c-4d5e-4f60-8a7b-9c0d1e2f3a4b"
		password = "Pl41n-Secret-Passw0rd"
	)
	imdsDoc, _ := json.Marshal(map[string]any{"compute": map[string]any{
		"azEnvironment": "AzurePublicCloud", "location": "westeurope", "name": "az-vm",
		"osProfile":           map[string]any{"adminUsername": "azureuser", "computerName": "az-imds-name", "disablePasswordAuthentication": "false"},
		"platformFaultDomain": "0", "vmId": uuid, "vmSize": "Standard_B2s",
		"publicKeys": []map[string]string{{"keyData": dsKey, "path": "/home/azureuser/.ssh/authorized_keys"}},
	}})
	tree := writeTree(t, map[string]string{"metadata/instance": string(imdsDoc)})
	srv, run := startIMDS(t, imdsserve.CloudAzure, tree, false)

	ovf := `<?xml version="1.0" encoding="utf-8"?>
<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1" xmlns:oe="http://schemas.dmtf.org/ovf/environment/1" xmlns:wa="http://schemas.microsoft.com/windowsazure" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">
  <wa:ProvisioningSection>
    <wa:Version>1.0</wa:Version>
    <LinuxProvisioningConfigurationSet xmlns="http://schemas.microsoft.com/windowsazure">
      <ConfigurationSetType>LinuxProvisioningConfiguration</ConfigurationSetType>
      <HostName>az-ovf-name</HostName>
      <UserName>azureuser</UserName>
      <UserPassword>` + password + `</UserPassword>
      <DisableSshPasswordAuthentication>false</DisableSshPasswordAuthentication>
      <CustomData>` + base64.StdEncoding.EncodeToString([]byte(dsUserData("az-sim", true))) + `</CustomData>
    </LinuxProvisioningConfigurationSet>
  </wa:ProvisioningSection>
  <wa:PlatformSettingsSection>
    <wa:Version>1.0</wa:Version>
    <PlatformSettings xmlns="http://schemas.microsoft.com/windowsazure">
      <ProvisionGuestAgent>false</ProvisionGuestAgent>
      <PreprovisionedVm>false</PreprovisionedVm>
    </PlatformSettings>
  </wa:PlatformSettingsSection>
</Environment>
`
	media := v.seed(map[string][]byte{"ovf-env.xml": []byte(ovf)}, harness.SeedISOLabelPrefix+"rd_rdfe_stable.1")

	// The wireserver is the simulator too (guest 169.254.169.254:80).
	im, err := harness.OpenImage(v.disk)
	if err != nil {
		t.Fatal(err)
	}
	if err := im.WriteFile("/etc/cloud/cloud.cfg.d/90-azure-test.cfg", []byte("datasource:\n  Azure:\n    wireserver_address: "+imdsIP+"\n")); err != nil {
		t.Fatal(err)
	}

	r := v.boot(harness.BootOptions{Seed: media, SeedKind: harness.SeedCDROMAHCI, SMBIOSUUID: uuid,
		SMBIOSChassisAsset: "7783-7084-3265-9085-8269-3286-77", GuestFwd: imdsFwd(run.Port())})
	t.Logf("simulator requests:\n%s", srv.Log())
	if strings.Contains(r.Console, password) {
		t.Errorf("the OVF password is on the console")
	}
	wantPoweredOff(t, r)
	wantEphemeralNet(t, r)

	d := v.image()
	if h := d.hostname(); h != "az-sim" {
		t.Errorf("/etc/hostname = %q, want az-sim (CustomData's hostname)", h)
	}
	d.wantContent(harness.InstanceIDPath, uuid+"\n")
	d.wantContent("/etc/imds/written.txt", "written for az-sim\n")
	d.wantLines("/var/log/imds-runcmd.log", 1)
	d.wantContains("/var/lib/cloud/instance/datasource", "DataSourceAzure")
	if _, ok := d.passwd()["azureuser"]; !ok {
		t.Errorf("azureuser (the OVF's UserName) not in /etc/passwd")
	}
	sh := d.read("/etc/shadow")
	hash := harness.ParseShadow([]byte(sh))["azureuser"]
	if got, err := target.SHA512Crypt(password, hash); !strings.HasPrefix(hash, "$6$") || err != nil || got != hash || strings.Contains(sh, password) {
		t.Errorf("/etc/shadow: azureuser's password %q is not a SHA-512 hash of the OVF password (%v)", hash, err)
	}
	d.wantContains("/home/azureuser/.ssh/authorized_keys", dsKey)
	waagent := d.read("/var/lib/waagent/ovf-env.xml")
	if strings.Contains(waagent, password) || !strings.Contains(waagent, "REDACTED") {
		t.Errorf("/var/lib/waagent/ovf-env.xml keeps the password (or lost the redaction marker)")
	}
	d.wantMode("/var/lib/waagent/ovf-env.xml", 0o600, 0, 0)
	if log, _ := d.readOpt("/var/log/cloud-init.log"); strings.Contains(log, password) {
		t.Errorf("the OVF password is in cloud-init.log")
	}

	reps := srv.HealthReports()
	if len(reps) != 1 || reps[0].State != "Ready" {
		t.Errorf("health reports %+v, want one Ready", reps)
	}
	d.wantStagesDone(d.status(), true)
}

package identify

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// Ec2's strict_id setting: what to answer when the platform does not
// identify itself as one of the known EC2 clouds.
const (
	// Ec2StrictIDDefault is ds-identify's DI_EC2_STRICT_ID_DEFAULT.
	Ec2StrictIDDefault = "true"
	ec2StrictIDKey     = "ci.datasource.ec2.strict_id"
)

func checkEc2(f *Facts) Check {
	if f.seedDir("ec2", "meta-data", "user-data") {
		return found("seed ec2")
	}
	if f.IsContainer() {
		return notFound("container")
	}
	platform := ec2Platform(f)
	f.debug(1, fmt.Sprintf("ec2 platform is '%s'.", platform))
	if platform != "Unknown" {
		return found("platform " + platform)
	}
	strict := ec2StrictID(f)
	if !validStrictID(strict) {
		f.warn(fmt.Sprintf("datasource/Ec2/strict_id was set to invalid '%s'. using '%s'", strict, Ec2StrictIDDefault))
		strict = Ec2StrictIDDefault
	}
	c := Check{ExtraConfig: `datasource: {Ec2: {strict_id: "` + strict + `"}}`}
	if strict == "true" {
		c.Verdict, c.Reason = NotFound, "unknown EC2 platform and strict_id is true"
	} else {
		c.Verdict, c.Reason = Maybe, "unknown EC2 platform and strict_id is "+strict
	}
	return c
}

func validStrictID(s string) bool {
	switch s {
	case "true", "false", "warn":
		return true
	}
	rest, ok := strings.CutPrefix(s, "warn,")
	return ok && rest != "" && rest[0] >= '0' && rest[0] <= '9'
}

// ec2Platform is ec2_identify_platform.
func ec2Platform(f *Facts) string {
	d := f.in.DMI
	switch {
	case glob("*.brightbox.com", d.ProductSerial):
		return "Brightbox"
	case glob("*.zstack.io", d.ChassisAssetTag):
		return "ZStack"
	case d.SysVendor == "e24cloud":
		return "E24cloud"
	case d.ProductName == "3DS Outscale VM" && d.SysVendor == "3DS Outscale":
		return "Outscale"
	}
	if u, ok := readFirstLine(f.host, "sys/hypervisor/uuid"); ok && strings.HasPrefix(u, "ec2") {
		return "AWS"
	}
	if IsAWSUUID(d.ProductUUID) {
		return "AWS"
	}
	return "Unknown"
}

// IsAWSUUID reports whether a DMI product_uuid is an EC2 instance's: it
// starts with "ec2" (any case), or does so once its first fields are read
// little-endian (45E12AEC-… is ec2ae145-…), as cloud-init's identify_aws.
func IsAWSUUID(u string) bool {
	u = strings.ToLower(strings.TrimSpace(u))
	if strings.HasPrefix(u, "ec2") {
		return true
	}
	u = strings.Trim(u, "{}")
	u = strings.ReplaceAll(u, "-", "")
	b, err := hex.DecodeString(u)
	if err != nil || len(b) != 16 {
		return false
	}
	le := []byte{b[3], b[2], b[1], b[0]}
	return strings.HasPrefix(hex.EncodeToString(le), "ec2")
}

// ec2StrictID is ec2_read_strict_setting: the kernel command line, then
// strict_id in cloud.cfg or cloud.cfg.d/*ec2*.cfg, then ds-identify.cfg,
// then the default.
func ec2StrictID(f *Facts) string {
	if v, ok := f.in.Cmdline.Get(ec2StrictIDKey); ok {
		if v == "" {
			return Ec2StrictIDDefault
		}
		return v
	}
	if v, file, ok := checkConfig(f.files, "strict_id", configFiles(f.files, "*[Ee][Cc]2*.cfg")); ok {
		f.debug(2, fmt.Sprintf("/%s set strict_id to %s", file, v))
		return v
	}
	if b, err := readFile(f.files, PathDIConfig); err == nil {
		if v, ok := diConfigValue(string(b), ec2StrictIDKey); ok && v != "" {
			return v
		}
	}
	return Ec2StrictIDDefault
}

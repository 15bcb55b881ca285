package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestPackageLayout(t *testing.T) {
	entries, enable, err := PackageLayout([]byte("agent"), []byte("cfg"), "debian")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.Path] = e.Link
	}
	for p, link := range map[string]string{
		installAgentPath:                             "",
		installCloudInitPath:                         "cloudroot",
		installCloudIDPath:                           "cloudroot",
		installCloudCfgPath:                          "",
		systemdUnitDir + "/cloudroot-config.service": "",
		systemdGeneratorDir + "/" + GeneratorName:    installAgentPath,
	} {
		l, ok := got[p]
		if !ok {
			t.Errorf("no %s in the layout", p)
		} else if l != link {
			t.Errorf("%s -> %q, want %q", p, l, link)
		}
	}
	for p := range got {
		if strings.HasPrefix(p, systemdEtcDir+"/") {
			t.Errorf("%s is an enable link: the maintainer scripts make those", p)
		}
	}
	for _, u := range []string{"cloudroot-config.service", "cloudroot-final.service", "cloudroot-hostkeys.service"} {
		if !slices.Contains(enable, u) {
			t.Errorf("enable %v lacks %s", enable, u)
		}
	}
}

package pkgmgr

import (
	"context"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/modules"
)

func TestAptPipelining(t *testing.T) {
	for _, tc := range []struct {
		cfg, want string
		warn      bool
	}{
		{"apt_pipelining: false\n", "0", false},
		{"apt_pipelining: 3\n", "3", false},
		{"apt_pipelining: '5'\n", "5", false},
		{"apt_pipelining: os\n", "", false},
		{"apt_pipelining: none\n", "", false},
		{"apt_pipelining: unchanged\n", "", false},
		{"{}\n", "", false},
		{"apt_pipelining: true\n", "", true},
		{"apt_pipelining: 6\n", "", true},
	} {
		c, _, _ := testContext(t, yamlCfg(t, tc.cfg), baseFiles)
		var warns []string
		c.Warn = func(m string) { warns = append(warns, m) }
		if err := AptPipelining.Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		got := ""
		if b, err := c.Root.ReadFile(AptPipeliningFile); err == nil {
			got = string(b)
		}
		want := ""
		if tc.want != "" {
			want = "//Written by cloud-init per 'apt_pipelining'\nAcquire::http::Pipeline-Depth \"" + tc.want + "\";\n"
		}
		if got != want || (len(warns) > 0) != tc.warn {
			t.Errorf("%q: wrote %q, warnings %q", tc.cfg, got, warns)
		}
	}
}

// TestUnverifiedDistro: an apt module on Alpine is skipped unless forced
// through unverified_modules, as cloud-init does.
func TestUnverifiedDistro(t *testing.T) {
	files := map[string]string{"etc/os-release": "ID=alpine\n"}
	for _, tc := range []struct {
		cfg  string
		runs bool
	}{
		{"cloud_config_modules: [apt_pipelining]\napt_pipelining: 2\n", false},
		{"cloud_config_modules: [apt_pipelining]\napt_pipelining: 2\nunverified_modules: [apt_pipelining]\n", true},
		// unverified_modules names a module as the list does, unnormalised.
		{"cloud_config_modules: [apt_pipelining]\napt_pipelining: 2\nunverified_modules: [apt-pipelining]\n", false},
		{"cloud_config_modules: [apt-pipelining]\napt_pipelining: 2\nunverified_modules: [apt-pipelining]\n", true},
		// cloud-init's distro name is system_info.distro when the image sets it.
		{"cloud_config_modules: [apt_pipelining]\napt_pipelining: 2\nsystem_info: {distro: debian}\n", true},
	} {
		c, _, _ := testContext(t, yamlCfg(t, tc.cfg), files)
		rep := modules.RunStage(context.Background(), c, modules.StageConfig)
		if c.Root.Exists(AptPipeliningFile) != tc.runs || len(rep.Errors) != 0 {
			t.Errorf("%q: wrote=%v report %+v", tc.cfg, c.Root.Exists(AptPipeliningFile), rep)
		}
	}
}

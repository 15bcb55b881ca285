package harness

import (
	"math"
	"testing"
)

func TestModuleTimes(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  string
		want map[string]float64
	}{
		{name: "cloud-init events", log: `2026-11-25 15:20:01,000 - util.py[DEBUG]: Cloud-init v. 22.4.2 running 'init' at Wed, 25 Nov 2026 15:20:01 +0000.
2026-11-25 15:20:02,100 - handlers.py[DEBUG]: start: init-network/config-ssh: running config-ssh with frequency once-per-instance
2026-11-25 15:20:02,250 - util.py[DEBUG]: Running command ['ssh-keygen', '-t', 'rsa']
2026-11-25 15:20:04,600 - handlers.py[DEBUG]: finish: init-network/config-ssh: SUCCESS: config-ssh ran successfully
2026-11-25 15:20:05,000 - handlers.py[DEBUG]: start: modules-final/config-scripts-user: running config-scripts-user with frequency once-per-instance
2026-11-25 15:20:09,500 - handlers.py[DEBUG]: finish: modules-final/config-scripts-user: FAIL: running config-scripts-user failed
2026-11-25 15:20:09,600 - handlers.py[DEBUG]: start: init-local/search-NoCloud: searching for local data from DataSourceNoCloud
2026-11-25 15:20:09,900 - handlers.py[DEBUG]: finish: init-local/search-NoCloud: SUCCESS: found local data
2026-11-25 15:20:10,000 - handlers.py[DEBUG]: start: modules-config/config-locale: running config-locale
`, want: map[string]float64{"ssh": 2.5, "scripts_user": 4.5}},
		{name: "cloudroot slog", log: `time=2026-11-25T15:20:01.000Z level=INFO msg="running module" stage=init module=ssh frequency=once-per-instance
time=2026-11-25T15:20:02.278Z level=INFO msg="finished module" module=ssh duration=1.2781007
time=2026-11-25T15:20:03.000Z level=ERROR msg="Running module scripts_user (cc_scripts_user) failed: exit status 1" module=scripts_user duration=0.5
time=2026-11-25T15:20:03.100Z level=INFO msg="finished module" module=bootcmd duration=1e-3
time=2026-11-25T15:20:03.200Z level=INFO msg="finished module" module=bootcmd duration=0.25
`, want: map[string]float64{"ssh": 1.2781007, "scripts_user": 0.5, "bootcmd": 0.251}},
		{name: "nothing", log: "no events here\n - \n", want: map[string]float64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ModuleTimes([]byte(tc.log))
			if len(got) != len(tc.want) {
				t.Errorf("ModuleTimes = %v, want %v", got, tc.want)
			}
			for k, w := range tc.want {
				if math.Abs(got[k]-w) > 1e-6 {
					t.Errorf("%s = %v, want %v", k, got[k], w)
				}
			}
		})
	}
}

func FuzzModuleTimes(f *testing.F) {
	f.Add([]byte("2026-11-25 15:20:02,100 - handlers.py[DEBUG]: start: init-network/config-ssh: x\n2026-11-25 15:20:04,600 - handlers.py[DEBUG]: finish: init-network/config-ssh: SUCCESS: y\n"))
	f.Add([]byte(`time=x level=INFO msg="finished module" module="a b" duration=0.5` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for k, v := range ModuleTimes(b) {
			if k == "" || v < 0 || math.IsNaN(v) {
				t.Fatalf("module %q duration %v", k, v)
			}
		}
	})
}

func TestHostKeyCPU(t *testing.T) {
	for _, tc := range []struct {
		log    string
		want   float64
		wantOK bool
	}{
		{log: "2026-11-28 07:55:57,123 - init_linux.go[INFO]: host key generation keys=3 cpu=2.489s\n", want: 2.489, wantOK: true},
		{log: "2026-11-28 07:55:57,123 - init_linux.go[INFO]: some other line cpu=2.489s\n", want: 0, wantOK: false},
		{log: "time=2026-11-25T16:01:13.640Z level=INFO msg=\"host key generation\" keys=3 cpu=2.345s\n", want: 2.345, wantOK: true},
		{log: "time=x level=INFO msg=\"finished module\" module=ssh duration=0.1\n"},
		{log: "2026-11-25 15:20:02,100 - handlers.py[DEBUG]: start: init-network/config-ssh: x\n"},
	} {
		got, ok := HostKeyCPU([]byte(tc.log))
		if ok != tc.wantOK || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("HostKeyCPU(%q) = %v, %v; want %v, %v", tc.log, got, ok, tc.want, tc.wantOK)
		}
	}
}

func FuzzHostKeyCPU(f *testing.F) {
	f.Add([]byte("msg=\"host key generation\" keys=3 cpu=2.345s\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, ok := HostKeyCPU(b); v < 0 || math.IsNaN(v) || (!ok && v != 0) {
			t.Fatalf("HostKeyCPU = %v, %v", v, ok)
		}
	})
}

package distro

import "testing"

func TestAptSourcesDeb822(t *testing.T) {
	for _, tc := range []struct {
		osr  string
		want bool
	}{
		{"ID=debian\nVERSION_ID=\"12\"\n", false},
		{"ID=debian\nVERSION_ID=\"13\"\n", true},
		{"ID=debian\n", true},
		{"ID=ubuntu\nVERSION_ID=\"22.04\"\n", false},
		{"ID=ubuntu\nVERSION_ID=\"23.10\"\n", true},
		{"ID=ubuntu\nVERSION_ID=\"24.04\"\n", true},
	} {
		if got := ParseOSRelease([]byte(tc.osr)).AptSourcesDeb822(); got != tc.want {
			t.Errorf("%q: %v", tc.osr, got)
		}
	}
	if got := OSReleaseCodename([]byte("ID=ubuntu\nVERSION_CODENAME=noble\nUBUNTU_CODENAME=noble\n")); got != "noble" {
		t.Errorf("codename %q", got)
	}
	if got := OSReleaseCodename([]byte("ID=ubuntu\nUBUNTU_CODENAME=\"jammy\"\n")); got != "jammy" {
		t.Errorf("codename %q", got)
	}
}

package netup

import (
	"strings"
	"testing"
)

// TestRenameInNetns: Rename gives a down interface with the expected MAC
// its new name, and refuses an interface that is up, one with another
// MAC and a name that is taken.
func TestRenameInNetns(t *testing.T) {
	n := newTestNet(t)
	const mac = "52:54:00:99:00:02"
	for _, tc := range []struct{ from, to, mac, wantErr string }{
		{"cr0", "lan0", "52:54:00:99:00:03", "has address"},
		{"cr0", "lo", mac, "exists already"},
		{"cr9", "lan0", mac, "interface cr9"},
	} {
		err := in(n.client, func() error { return Rename(tc.from, tc.to, tc.mac) })
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Rename(%s, %s, %s) = %v, want an error with %q", tc.from, tc.to, tc.mac, err, tc.wantErr)
		}
	}
	n.ip(t, "link", "set", "cr0", "up")
	if err := in(n.client, func() error { return Rename("cr0", "lan0", mac) }); err == nil || !strings.Contains(err.Error(), "is up") {
		t.Errorf("Rename of an interface that is up = %v, want refused", err)
	}
	n.ip(t, "link", "set", "cr0", "down")
	if err := in(n.client, func() error { return Rename("cr0", "lan0", strings.ToUpper(mac)) }); err != nil {
		t.Fatalf("Rename(cr0, lan0) = %v", err)
	}
	if out := n.ip(t, "-o", "link", "show", "dev", "lan0"); !strings.Contains(out, mac) {
		t.Errorf("after the rename, ip link show lan0 = %q", out)
	}
}

package modules

import "testing"

// TestSeedRandomMetadata: the datasource's random_seed follows the
// configured data, into a file of the target.
func TestSeedRandomMetadata(t *testing.T) {
	c, rr, _ := testContext(t, Config{"random_seed": map[string]any{"file": "/var/seed", "data": "cfg|"}},
		map[string]string{"/var/seed": "old|"})
	c.Meta["random_seed"] = "from-metadata"
	if err := SeedRandom.Run(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, c, "/var/seed"); got != "old|cfg|from-metadata" {
		t.Errorf("seed file = %q", got)
	}
	if len(rr.calls) != 0 {
		t.Errorf("commands ran: %v", rr.calls)
	}
}

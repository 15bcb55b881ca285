package schema

import "testing"

// TestEmbeddedSchemasValid checks the embedded schemas against their
// draft's meta-schema, the check the run-time compile skips
// (jsonschema's TrustSchemas).
func TestEmbeddedSchemasValid(t *testing.T) {
	if _, err := compileSchema(false); err != nil {
		t.Errorf("cloud-config schema: %v", err)
	}
	if _, err := compileNetwork(false); err != nil {
		t.Errorf("network-config schemas: %v", err)
	}
}

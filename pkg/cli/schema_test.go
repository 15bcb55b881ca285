package cli

import "testing"

func TestSchemaGolden(t *testing.T) { runCLIGolden(t, "schema") }

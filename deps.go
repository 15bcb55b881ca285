//go:build tools

// Package tools pins libraries the module depends on before code imports
// them, so `go mod tidy` keeps them.
package tools

import (
	_ "github.com/evanphx/json-patch/v5"
	_ "github.com/nikolalohinski/gonja/v2"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
)

//go:build tools

package tools

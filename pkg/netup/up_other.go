//go:build !linux

package netup

import (
	"context"
	"fmt"
)

type system struct{}

// Up is only implemented on Linux.
func Up(ctx context.Context, o Options) (*Lease, error) {
	return nil, fmt.Errorf("netup.Up: %w", ErrUnsupported)
}

// Static is only implemented on Linux.
func Static(ctx context.Context, c IPConfig, o Options) (*Lease, error) {
	return nil, fmt.Errorf("netup.Static: %w", ErrUnsupported)
}

// Release does nothing off Linux: no lease can have been obtained.
func (l *Lease) Release(ctx context.Context) error { return nil }

// Down does nothing off Linux: nothing can have been applied.
func (l *Lease) Down() error { return nil }

// Rename is only implemented on Linux.
func Rename(from, to, mac string) error {
	return fmt.Errorf("netup.Rename: %w", ErrUnsupported)
}

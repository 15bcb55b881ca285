package modules

// The ssh module's host-key hooks, part of Context: the key source and
// the deferral its callers (pkg/stages, `cloudroot hostkeys`) take over.
// The ssh module, its key pool and the deferral markers are
// pkg/modules/users (hostkeys.go); only these two types stay here, since
// Context names them.

import (
	"context"
	"crypto"
)

// HostKeySource supplies host private keys (users.HostKeyPool).
type HostKeySource interface {
	// HostKey returns a new private key of kind (rsa, ecdsa, ed25519). An
	// error wrapping users.ErrNoEntropy means the kernel RNG was not ready.
	HostKey(ctx context.Context, kind string) (crypto.Signer, error)
}

// HostKeyDeferral is what the ssh module hands to Context.DeferHostKeys
// and Context.BackgroundHostKeys, and the content of the markers
// (users.HostKeysDeferredMarker, users.HostKeysBackgroundMarker) the
// booted root reads it back from.
type HostKeyDeferral struct {
	// Types are the ssh_genkeytypes still to generate (rsa, ecdsa, ed25519).
	Types []string `json:"types"`
	// Quiet is ssh_quiet_keygen: no ssh-keygen style output.
	Quiet bool `json:"quiet,omitempty"`
	// Reason says why generation was deferred.
	Reason string `json:"reason"`
}

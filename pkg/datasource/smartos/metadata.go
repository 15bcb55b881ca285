package smartos

// Reading the keys cloud-init reads, with the legacy base64 rules of the
// serial (KVM) client.

import (
	"context"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// DefaultNoBase64Decode are the keys never base64-decoded (cloud-init's
// NO_BASE64_DECODE, with "sdc:uuid" and "user-data" as the two entries
// cloud-init meant: its list lacks a comma and holds "sdc:uuiduser-data").
var DefaultNoBase64Decode = []string{
	"iptables_disable",
	"motd_sys_info",
	"root_authorized_keys",
	"sdc:datacenter_name",
	"sdc:uuid",
	"user-data",
	"user-script",
}

// b64Rules are the serial client's base64 rules: a value is decoded when
// base64_all is set, or its key is listed in base64_keys or has a true
// b64-<key> companion, unless the key is in no_base64_decode. The
// configuration's base64_all and base64_keys add to what the metadata
// says.
type b64Rules struct {
	all      bool
	keys     map[string]bool
	noDecode map[string]bool
}

// reader reads keys through a client, base64-decoding for the serial
// client. The metadata's own rules (KEYS, base64_all, base64_keys, b64-*)
// are read once, when first needed.
type reader struct {
	c      *Client
	legacy bool
	rules  b64Rules
	loaded bool
	log    *slog.Logger
}

// raw reads key without decoding; an empty value is no value, as in
// cloud-init.
func (r *reader) raw(ctx context.Context, key string) (string, bool, error) {
	v, ok, err := r.c.Get(ctx, key)
	if err != nil || !ok || len(v) == 0 {
		return "", false, err
	}
	return string(v), true, nil
}

func (r *reader) get(ctx context.Context, key string) (string, bool, error) {
	v, ok, err := r.raw(ctx, key)
	if err != nil || !ok || !r.legacy || r.rules.noDecode[key] {
		return v, ok, err
	}
	b64, err := r.isBase64(ctx, key)
	if err != nil {
		return "", false, err
	}
	if b64 {
		dec, err := datasource.DecodeBase64(v)
		if err != nil || !utf8.Valid(dec) {
			// cloud-init warns and keeps the value as read.
			r.log.Warn("value is not base64 text; kept as read", "key", key)
		} else {
			v = string(dec)
		}
	}
	return v, true, nil
}

func (r *reader) isBase64(ctx context.Context, key string) (bool, error) {
	if !r.loaded {
		if err := r.load(ctx); err != nil {
			return false, err
		}
		r.loaded = true
	}
	return r.rules.all || r.rules.keys[key], nil
}

func (r *reader) load(ctx context.Context) error {
	if r.rules.all {
		return nil
	}
	keys, err := r.c.Keys(ctx)
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, k := range keys {
		listed[k] = true
	}
	if listed["base64_all"] {
		v, _, err := r.raw(ctx, "base64_all")
		if err != nil {
			return err
		}
		if IsTrue(v) {
			r.rules.all = true
			return nil
		}
	}
	if listed["base64_keys"] {
		v, _, err := r.raw(ctx, "base64_keys")
		if err != nil {
			return err
		}
		for _, k := range strings.Split(v, ",") {
			r.rules.keys[k] = true
		}
	}
	for _, k := range keys {
		name, ok := strings.CutPrefix(k, "b64-")
		if !ok {
			continue
		}
		v, _, err := r.raw(ctx, k)
		if err != nil {
			return err
		}
		if IsTrue(v) {
			r.rules.keys[name] = true
		} else {
			delete(r.rules.keys, name)
		}
	}
	return nil
}

// readAll reads Keys() in cloud-init's order: the values that answered.
func (r *reader) readAll(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range Keys() {
		v, ok, err := r.get(ctx, k)
		if err != nil {
			return nil, err
		}
		if ok {
			out[k] = v
		}
	}
	return out, nil
}

package userdata

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkProcessLarge processes a 400-part MIME user-data (~1 MiB):
// cloud-config, scripts, boothooks and base64 (non-ASCII) parts.
func BenchmarkProcessLarge(b *testing.B) {
	var atts []Attachment
	for i := 0; i < 100; i++ {
		atts = append(atts,
			Attachment{fmt.Sprintf("c%d.yaml", i), "cloud-config", []byte(fmt.Sprintf("#cloud-config\nruncmd:\n%s", strings.Repeat("  - [echo, hello, world]\n", 100)))},
			Attachment{fmt.Sprintf("s%d.sh", i), "x-shellscript", []byte("#!/bin/sh\n" + strings.Repeat("echo hello world\n", 100))},
			Attachment{fmt.Sprintf("b%d", i), "cloud-boothook", []byte("#cloud-boothook\n#!/bin/sh\necho hook\n")},
			Attachment{fmt.Sprintf("u%d.sh", i), "x-shellscript-per-boot", []byte("#!/bin/sh\necho héllo wörld\n" + strings.Repeat("# padding\n", 100))},
		)
	}
	in, err := MakeMIME(atts)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := Process(context.Background(), "user-data", in, Options{})
		if err != nil || len(res.Parts) != len(atts) || len(res.Errors) > 0 {
			b.Fatalf("%v parts=%d errors=%v", err, len(res.Parts), res.Errors)
		}
	}
}

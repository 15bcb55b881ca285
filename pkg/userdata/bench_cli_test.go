package userdata

// The corpus shared with scripts/bench-cloudinit.sh, which times the same
// operations with cloud-init's CLI and library (docs/performance.md, "User-data
// and configuration against cloud-init"). Everything here is deterministic:
// the script writes the corpus with TestWriteBenchCorpus, builds the MIME
// message with `cloud-init devel make-mime`, and hands those exact bytes back
// to BenchmarkCorpusProcessMerge through CLOUDROOT_BENCH_USERDATA. Without
// that variable the benchmark builds the message from the same parts with
// MakeMIME (same parts and encodings, a different boundary).

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudroot/cloudroot/pkg/cloudcfg"
)

const (
	benchConfigParts = 200  // cloud-config parts in the MIME corpus
	benchBigFiles    = 2000 // write_files entries in big.yaml
	benchBigRuncmd   = 5000 // runcmd lines in big.yaml
	benchTmplFiles   = 1000 // write_files rendered by tmpl.yaml's loop
)

// benchText is deterministic filler: n lines naming the part.
func benchText(tag string, n int) string {
	var b strings.Builder
	for j := 0; j < n; j++ {
		fmt.Fprintf(&b, "# %s line %03d: key%03d = value-%s-%03d\n", tag, j, j, tag, j)
	}
	return b.String()
}

func benchGzipB64(s string) string {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // header has no name or mtime
	zw.Write([]byte(s))
	zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// benchConfigPart is cloud-config part i of the MIME corpus: a user, three
// write_files (b64, gz+b64, literal block), 20 runcmd entries and, on every
// fourth part, a merge_how that appends lists instead of replacing them.
func benchConfigPart(i int) []byte {
	var b strings.Builder
	b.WriteString("#cloud-config\n")
	if i%4 == 3 {
		b.WriteString("merge_how:\n  - name: list\n    settings: [append]\n  - name: dict\n    settings: [no_replace, recurse_list]\n  - name: str\n    settings: []\n")
	}
	fmt.Fprintf(&b, "users:\n  - name: user%03d\n    gecos: Bench User %d\n    groups: [adm, users]\n    shell: /bin/bash\n", i, i)
	fmt.Fprintf(&b, "    sudo: \"ALL=(ALL) NOPASSWD:ALL\"\n    lock_passwd: true\n    ssh_authorized_keys:\n      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%040d user%03d@example\n", i, i)
	b.WriteString("write_files:\n")
	fmt.Fprintf(&b, "  - path: /etc/bench/%03d/app.conf\n    encoding: b64\n    permissions: '0644'\n    owner: root:root\n    content: %s\n",
		i, base64.StdEncoding.EncodeToString([]byte(benchText(fmt.Sprintf("app%03d", i), 12))))
	fmt.Fprintf(&b, "  - path: /etc/bench/%03d/data.txt\n    encoding: gz+b64\n    permissions: '0600'\n    content: %s\n",
		i, benchGzipB64(benchText(fmt.Sprintf("data%03d", i), 40)))
	fmt.Fprintf(&b, "  - path: /etc/bench/%03d/notes.txt\n    defer: %v\n    content: |\n", i, i%2 == 0)
	for _, l := range strings.SplitAfter(strings.TrimSuffix(benchText(fmt.Sprintf("notes%03d", i), 10), "\n"), "\n") {
		b.WriteString("      " + l)
	}
	b.WriteString("\nruncmd:\n")
	for j := 0; j < 20; j++ {
		if j%2 == 0 {
			fmt.Fprintf(&b, "  - [sh, -c, \"echo part %d step %d >> /var/log/bench.log\"]\n", i, j)
		} else {
			fmt.Fprintf(&b, "  - echo part %d step %d\n", i, j)
		}
	}
	fmt.Fprintf(&b, "bootcmd:\n  - [cloud-init-per, once, bench%03d, echo, %d]\n", i, i)
	fmt.Fprintf(&b, "packages:\n  - pkg-%03d\n  - [pinned-%03d, 1.%d]\n", i, i, i)
	fmt.Fprintf(&b, "final_message: part %d done after $UPTIME s\n", i)
	return []byte(b.String())
}

// benchAttachments is the MIME corpus, in make-mime's order: the cloud-config
// parts with a script, a per-boot script or a boothook after every 20th.
func benchAttachments() []Attachment {
	var atts []Attachment
	for i := 0; i < benchConfigParts; i++ {
		atts = append(atts, Attachment{fmt.Sprintf("cfg-%03d.yaml", i), "cloud-config", benchConfigPart(i)})
		if i%20 != 19 {
			continue
		}
		n := i / 20
		switch n % 3 {
		case 0:
			atts = append(atts, Attachment{fmt.Sprintf("script-%02d.sh", n), "x-shellscript", []byte("#!/bin/sh\nset -e\n" + benchText(fmt.Sprintf("script%02d", n), 30) + "echo done\n")})
		case 1:
			atts = append(atts, Attachment{fmt.Sprintf("boot-%02d.sh", n), "x-shellscript-per-boot", []byte("#!/bin/sh\n" + benchText(fmt.Sprintf("boot%02d", n), 30) + "date >> /var/log/boots\n")})
		case 2:
			atts = append(atts, Attachment{fmt.Sprintf("hook-%02d", n), "cloud-boothook", []byte("#cloud-boothook\n#!/bin/sh\necho \"$INSTANCE_ID\" > /run/hook\n")})
		}
	}
	return atts
}

// benchBigYAML is one large #cloud-config for `schema --config-file`.
func benchBigYAML() []byte {
	var b strings.Builder
	b.WriteString("#cloud-config\nhostname: bench\nusers:\n  - default\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "  - name: user%03d\n    groups: [adm, users]\n    shell: /bin/bash\n    sudo: \"ALL=(ALL) NOPASSWD:ALL\"\n    ssh_authorized_keys: [ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%040d user%03d@example]\n", i, i, i)
	}
	b.WriteString("write_files:\n")
	for i := 0; i < benchBigFiles; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "  - path: /etc/bench/f%04d.conf\n    content: |\n      key = %d\n      name = file %d\n    permissions: '0644'\n    owner: root:root\n", i, i, i)
		case 1:
			fmt.Fprintf(&b, "  - path: /etc/bench/f%04d.b64\n    encoding: b64\n    content: %s\n    append: false\n", i, base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("file %d\n", i))))
		case 2:
			fmt.Fprintf(&b, "  - path: /etc/bench/f%04d.txt\n    content: \"file %d\"\n    defer: true\n", i, i)
		}
	}
	b.WriteString("runcmd:\n")
	for i := 0; i < benchBigRuncmd; i++ {
		if i%2 == 0 {
			fmt.Fprintf(&b, "  - [sh, -c, \"echo %d\"]\n", i)
		} else {
			fmt.Fprintf(&b, "  - echo %d\n", i)
		}
	}
	return []byte(b.String())
}

// benchTemplate is a jinja user-data for `devel render`: variables from the
// instance-data fixture and a loop rendering benchTmplFiles write_files.
func benchTemplate() []byte {
	var b strings.Builder
	b.WriteString("## template: jinja\n#cloud-config\nhostname: {{ v1.local_hostname }}\nfqdn: {{ v1.local_hostname }}.{{ v1.cloud_name }}.example\n")
	b.WriteString("write_files:\n")
	fmt.Fprintf(&b, "{%% for i in range(%d) %%}\n", benchTmplFiles)
	b.WriteString("  - path: /etc/bench/{{ v1.instance_id }}/{{ i }}.conf\n    content: \"{{ ds.meta_data['local-hostname'] }} {{ v1.availability_zone }} {{ v1.cloud_name }} {{ i }}\"\n")
	b.WriteString("{% endfor %}\nruncmd:\n")
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, "  - echo {{ v1.instance_id }} {{ v1.platform }} %d\n", i)
	}
	return []byte(b.String())
}

// TestWriteBenchCorpus writes the corpus into $CLOUDROOT_BENCH_CORPUS (for
// scripts/bench-cloudinit.sh): parts/ with one file per attachment, attach.txt
// with make-mime's -a arguments in order, big.yaml and tmpl.yaml.
func TestWriteBenchCorpus(t *testing.T) {
	dir := os.Getenv("CLOUDROOT_BENCH_CORPUS")
	if dir == "" {
		t.Skip("CLOUDROOT_BENCH_CORPUS not set (see scripts/bench-cloudinit.sh)")
	}
	if err := os.MkdirAll(filepath.Join(dir, "parts"), 0o755); err != nil {
		t.Fatal(err)
	}
	var args strings.Builder
	for _, a := range benchAttachments() {
		p := filepath.Join(dir, "parts", a.Filename)
		if err := os.WriteFile(p, a.Content, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&args, "%s:%s\n", p, a.Type)
	}
	for name, b := range map[string][]byte{"attach.txt": []byte(args.String()), "big.yaml": benchBigYAML(), "tmpl.yaml": benchTemplate()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// benchCorpusMIME is $CLOUDROOT_BENCH_USERDATA (the message cloud-init's
// make-mime built) or the same parts through MakeMIME.
func benchCorpusMIME(b *testing.B) []byte {
	if p := os.Getenv("CLOUDROOT_BENCH_USERDATA"); p != "" {
		in, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		return in
	}
	in, err := MakeMIME(benchAttachments())
	if err != nil {
		b.Fatal(err)
	}
	return in
}

// benchMerge merges a processed payload the way the init stage does
// (pkg/stages: Result.Merged with cloudcfg.MergePart).
func benchMerge(b *testing.B, res *Result) map[string]any {
	merged, err := res.Merged(func(acc map[string]any, c CloudConfig) map[string]any {
		out, err := cloudcfg.MergePart(acc, cloudcfg.Part{Name: c.Part, Config: c.Config, MergeHow: c.MergeHeader})
		if err != nil {
			b.Fatal(err)
		}
		return out
	})
	if err != nil {
		b.Fatal(err)
	}
	return merged
}

// BenchmarkCorpusProcessMerge decodes the shared corpus (200 cloud-config
// parts + 10 scripts/boothooks, ~0.8 MB) and merges its cloud-config: plain
// and gzipped, and the two halves separately. scripts/bench-cloudinit.sh
// times the same work in cloud-init's library.
func BenchmarkCorpusProcessMerge(b *testing.B) {
	mime := benchCorpusMIME(b)
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(mime)
	zw.Close()
	wantParts := len(benchAttachments())
	process := func(b *testing.B, in []byte) *Result {
		res, err := Process(context.Background(), "user-data", in, Options{})
		if err != nil || len(res.Parts) != wantParts || len(res.CloudConfigs) != benchConfigParts || len(res.Errors) > 0 {
			b.Fatalf("%v parts=%d configs=%d errors=%v", err, len(res.Parts), len(res.CloudConfigs), res.Errors)
		}
		return res
	}
	check := func(b *testing.B, m map[string]any) {
		// 50 parts append their lists; the other 150 replace them, so
		// users ends with the last replacing part's user plus the
		// appending ones after it.
		if u, _ := m["users"].([]any); len(u) != 2 {
			b.Fatalf("merged users = %d, want 2", len(u))
		}
	}
	for _, c := range []struct {
		name string
		in   []byte
	}{{"mime", mime}, {"mime-gzip", gz.Bytes()}} {
		b.Run("process+merge/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(mime)))
			b.ReportAllocs()
			for b.Loop() {
				check(b, benchMerge(b, process(b, c.in)))
			}
		})
	}
	b.Run("process/mime", func(b *testing.B) {
		b.SetBytes(int64(len(mime)))
		b.ReportAllocs()
		for b.Loop() {
			process(b, mime)
		}
	})
	b.Run("merge", func(b *testing.B) {
		res := process(b, mime)
		b.ReportAllocs()
		for b.Loop() {
			check(b, benchMerge(b, res))
		}
	})
}

// TestBenchCorpusMerged writes the merged cloud-config of
// $CLOUDROOT_BENCH_USERDATA as JSON to $CLOUDROOT_BENCH_MERGED, so that
// scripts/bench-cloudinit.sh can check both tools computed the same result.
func TestBenchCorpusMerged(t *testing.T) {
	out := os.Getenv("CLOUDROOT_BENCH_MERGED")
	if out == "" || os.Getenv("CLOUDROOT_BENCH_USERDATA") == "" {
		t.Skip("CLOUDROOT_BENCH_MERGED and CLOUDROOT_BENCH_USERDATA not set (see scripts/bench-cloudinit.sh)")
	}
	in, err := os.ReadFile(os.Getenv("CLOUDROOT_BENCH_USERDATA"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Process(context.Background(), "user-data", in, Options{})
	if err != nil || len(res.Errors) > 0 {
		t.Fatal(err, res.Errors)
	}
	merged, err := res.Merged(func(acc map[string]any, c CloudConfig) map[string]any {
		out, err := cloudcfg.MergePart(acc, cloudcfg.Part{Name: c.Part, Config: c.Config, MergeHow: c.MergeHeader})
		if err != nil {
			t.Error(err)
		}
		return out
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(merged, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Package userdata turns user-data and vendor-data payloads into the parts
// cloud-init would act on, for every format cloud-init understands.
//
// The contract (cloud-init's user_data.py and handlers/, learned, not copied):
//
//   - A payload is first gunzipped if it is gzip (magic sniff), then parsed as
//     a MIME message when "mime-version:" occurs in its first 4096 bytes
//     (case-insensitive); otherwise it is one part of type
//     text/x-not-multipart.
//   - Each leaf part is decoded (Content-Transfer-Encoding base64 or
//     quoted-printable), gunzipped when its type is a gzip type, and its type
//     is re-detected from its first line when it is text/plain,
//     text/x-not-multipart or text/x-shellscript (Formats: longest header
//     first, case-insensitive, leading whitespace ignored).
//   - #include and #include-once parts are replaced by the parts of the
//     documents they name (fetched through Options.Fetch, at most
//     MaxIncludeDepth deep); #cloud-config-archive parts by their entries.
//     Neither takes a part number.
//   - Every other part is numbered in order across the whole message:
//     part-001, part-002… unless it carries a filename. Parts whose
//     Launch-Index differs from Options.LaunchIndex are then dropped.
//   - Parts are then handed to their handler: cloud-config is parsed and
//     listed in CloudConfigs (with merge_how/merge_type and the
//     Merge-Type/X-Merge-Type header), cloud-config-jsonp in JSONPatches,
//     scripts, per-boot/instance/once scripts and boothooks in their lists,
//     jinja templates rendered with Options.InstanceData and handled by
//     their rendered header. Anything else is a warning, never silence.
//
// Nothing here touches the disk or the network: fetching and the
// include-once cache are injected. Result.Files says where each script and
// boothook lands inside the target root.
package userdata

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Limits and defaults.
const (
	// DefaultMaxSize bounds the bytes produced by decompression and fetched
	// by includes in one Process call.
	DefaultMaxSize = 64 << 20
	// MaxIncludeDepth bounds #include recursion.
	MaxIncludeDepth = 10
	// MaxIncludeURLs bounds the URLs fetched (or read from the cache) for
	// one payload, so nested includes cannot multiply without end.
	MaxIncludeURLs = 256
	// MaxMIMEDepth bounds multipart nesting.
	MaxMIMEDepth = 10
	// MissingJinjaVar prefixes an undefined variable in a rendered template,
	// as cloud-init renders it.
	MissingJinjaVar = "CI_MISSING_JINJA_VAR/"
)

// Sentinels callers may branch on.
var (
	// ErrUnsupported marks a recognised format cloudroot does not process.
	ErrUnsupported = errors.New("unsupported user-data format")
	// ErrNoFetcher is recorded for an #include when Options.Fetch is nil
	// (it wraps ErrUnsupported: the caller cannot process includes).
	ErrNoFetcher = fmt.Errorf("#include is not supported without a fetcher: %w", ErrUnsupported)
	// ErrTooLarge marks a decompression or download past the size limit.
	ErrTooLarge = errors.New("exceeds the size limit")
	// ErrNoInstanceData is recorded for a jinja part when
	// Options.InstanceData is nil (it wraps ErrUnsupported).
	ErrNoInstanceData = fmt.Errorf("jinja templates are not supported without instance data: %w", ErrUnsupported)
)

// Options are the injected inputs of Process. The zero value works: no
// includes are fetched (each is recorded as an error), jinja parts fail.
type Options struct {
	// Fetch returns the body of an #include URL (http and https only).
	// HTTPFetcher builds one with cloud-init's timeouts and retries.
	Fetch func(ctx context.Context, url string) ([]byte, error)
	// IncludeOnceCache keeps #include-once documents across boots.
	IncludeOnceCache Cache
	// InstanceData is instance-data(-sensitive).json, for jinja templates.
	InstanceData map[string]any
	// MaxSize bounds decompressed and fetched bytes (DefaultMaxSize if 0).
	MaxSize int64
	// LaunchIndex, when set, drops parts whose Launch-Index differs.
	LaunchIndex *int
	// IncludeBudget bounds every #include fetch of the call together,
	// from the first one (DefaultIncludeBudget if 0; negative: only ctx).
	IncludeBudget time.Duration
}

// Part is one piece of user-data after includes, archives and templates.
type Part struct {
	// Type is the MIME type the part is handled as, e.g. "text/cloud-config".
	Type string
	// Filename as cloud-init names it: the MIME filename or part-NNN.
	Filename string
	// Content is the decoded, decompressed, rendered payload.
	Content []byte
	// Config is set for text/cloud-config parts that parsed.
	Config map[string]any
	// MergeType is the Merge-Type (or X-Merge-Type) header.
	MergeType string
	// LaunchIndex from the Launch-Index header or a cloud-config's
	// launch-index key.
	LaunchIndex *int
	// Template is "jinja" when the part was rendered from a template.
	Template string
	// Headers are the part's other headers (archive entries' extra keys).
	Headers map[string]string
}

// CloudConfig is one cloud-config part, in order, with how it asks to be
// merged. cloud-init merges each part into the result of the previous ones
// with the part's mergers (default "dict(replace)+list()+str()").
type CloudConfig struct {
	Part   string
	Config map[string]any
	// MergeHow is the part's merge_how (or merge_type) value: a string
	// like "list(append)+dict()+str()" or a list of {name, settings}.
	MergeHow any
	// MergeHeader is the Merge-Type or X-Merge-Type MIME header.
	MergeHeader string
	// Null is true for a part whose YAML is empty or null (Config is
	// empty): cloud-init's handler ignores it as "empty cloud config"
	// (it is also in Result.IgnoredCloudConfigs).
	Null bool `json:",omitempty"`
}

// JSONPatch is one #cloud-config-jsonp part: an RFC 6902 patch applied to the
// cloud-config merged from the first After CloudConfigs.
type JSONPatch struct {
	Part  string
	After int
	Patch []byte
}

// Script is a file to write: a script, per-* script or boothook.
type Script struct {
	// Name is the file name, cleaned as cloud-init cleans it.
	Name string
	// Part is the part's filename.
	Part    string
	Content []byte
}

// Result is a processed payload.
type Result struct {
	Source string
	// Parts in message order, after launch-index filtering.
	Parts []Part
	// CloudConfigs and JSONPatches in order (see Merged).
	CloudConfigs []CloudConfig
	JSONPatches  []JSONPatch
	// IgnoredCloudConfigs names, in order, the cloud-config and
	// cloud-config-jsonp parts cloud-init's CloudConfigPartHandler refuses
	// with a ValueError (empty or null YAML, YAML that is invalid or not a
	// mapping, a patch that is not JSON): cloud-config.txt lists them as
	// "# Cloud-config part ignored SCHEMA_ERROR: <name>".
	IgnoredCloudConfigs []string
	// InstanceScripts are text/x-shellscript parts: instance/scripts/
	// (vendor-data: instance/scripts/vendor/), run by scripts_user.
	InstanceScripts []Script
	// PerBoot, PerInstance, PerOnce are text/x-shellscript-per-* parts:
	// /var/lib/cloud/scripts/per-*/.
	PerBoot, PerInstance, PerOnce []Script
	// Boothooks are text/cloud-boothook parts, header line removed:
	// instance/boothooks/<name>, run every boot in init with INSTANCE_ID.
	Boothooks []Script
	// Warnings are recoverable problems (unknown types, plain text,
	// unsupported handlers, undefined jinja variables), each named by the
	// source, or in cloud-init's own words where a recoverable error of
	// 26.x is matched: a cloud-config part that is empty, null or not a
	// mapping ("Failed at merging in cloud config part from NAME: empty
	// cloud config", after load_yaml's "Failed loading yaml blob. ..."
	// for a non-mapping, once when the part is read for its launch-index
	// and once when it is handled).
	Warnings []string
	// Notices are worth logging but are no problem to cloud-init, which says
	// nothing about them: a repeated key in a cloud-config part (its last
	// value is used). They are not recorded as recoverable errors.
	Notices []string
	// Errors are parts that could not be used (failed includes, invalid
	// YAML, bad templates). Each is an *Error.
	Errors []error
}

// Error is a problem with one part, naming where it is.
type Error struct {
	Source string // "user-data", "vendor-data"
	// Part names the part ("part-002", "#include", "include <url>") or is
	// empty for the whole payload.
	Part string
	Line int    // 1-based line in the part, 0 when unknown
	URL  string // the include URL, when fetching failed
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Part != "" {
		b.WriteString(": ")
		b.WriteString(e.Part)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Configs returns the parsed cloud-config documents in order (merge_how and
// JSON patches ignored; see Merged for the full rules).
func (r *Result) Configs() []map[string]any {
	var out []map[string]any
	for _, c := range r.CloudConfigs {
		out = append(out, c.Config)
	}
	return out
}

// Scripts returns the text/x-shellscript parts (Part.Filename names them).
func (r *Result) Scripts() []Part {
	var out []Part
	for _, p := range r.Parts {
		if p.Type == TypeShellScript {
			out = append(out, p)
		}
	}
	return out
}

// MergeFunc merges one cloud-config part into the accumulated config, honouring
// the part's MergeHow/MergeHeader (the config package owns the merge rules).
type MergeFunc func(acc map[string]any, part CloudConfig) map[string]any

// Merged folds CloudConfigs and JSONPatches in the order cloud-init applies
// them: each part merged into the result so far, each patch applied where it
// appeared. A patch that fails is reported and skipped, as cloud-init does.
func (r *Result) Merged(merge MergeFunc) (map[string]any, error) {
	acc := map[string]any{}
	var errs []error
	pi := 0
	apply := func(upto int) {
		for ; pi < len(r.JSONPatches) && r.JSONPatches[pi].After <= upto; pi++ {
			next, err := ApplyJSONPatches(acc, r.JSONPatches[pi:pi+1])
			if err != nil {
				errs = append(errs, err)
				continue
			}
			acc = next
		}
	}
	for i, c := range r.CloudConfigs {
		apply(i)
		acc = merge(acc, c)
	}
	apply(len(r.CloudConfigs))
	return acc, errors.Join(errs...)
}

// Decode processes a payload with no fetcher, cache or instance data: the
// pre-Process API kept for callers. The returned error joins Result.Errors.
func Decode(source string, b []byte) (*Result, error) {
	res, err := Process(context.Background(), source, b, Options{})
	if err != nil {
		return res, err
	}
	return res, errors.Join(res.Errors...)
}

// Process decodes a user-data or vendor-data payload; source names it in
// every warning and error. Problems with single parts are recorded in
// Result.Warnings and Result.Errors; the returned error is reserved for a
// cancelled context. Process never panics on any input.
func Process(ctx context.Context, source string, raw []byte, opts Options) (res *Result, err error) {
	res = &Result{Source: source}
	if len(bytes.TrimSpace(raw)) == 0 {
		return res, nil
	}
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	p := &processor{ctx: ctx, source: source, opts: opts, res: res, budget: opts.MaxSize}
	defer func() {
		if r := recover(); r != nil {
			res.Errors = append(res.Errors, &Error{Source: source, Err: fmt.Errorf("internal error processing %s: %v", source, r)})
		}
	}()
	defer func() {
		if p.includeCancel != nil {
			p.includeCancel()
		}
	}()
	p.blob(raw, "", 0)
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("processing %s: %w", source, err)
	}
	p.filterLaunchIndex()
	for i := range p.parts {
		p.handle(&p.parts[i])
	}
	for _, pt := range p.parts {
		res.Parts = append(res.Parts, pt.Part)
	}
	return res, nil
}

package userdata

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/yaml11"
)

// processor carries one Process call.
type processor struct {
	ctx    context.Context
	source string
	opts   Options
	res    *Result
	parts  []pending
	count  int   // parts attached so far (part-NNN numbering)
	budget int64 // bytes left for decompression and includes
	urls   int   // include URLs followed
	// includeCtx bounds every #include fetch (includeContext).
	includeCtx    context.Context
	includeCancel context.CancelFunc
}

// pending is an attached part before handling.
type pending struct {
	Part
	origin string // "" or the include URL it came from
	// A cloud-config is parsed once, when attached (for launch-index).
	parsed  bool
	cfg     map[string]any
	cfgWarn []yaml11.Warning
	cfgErr  error
	// cfgNull: the document is empty or null; cfgType: the Python type
	// of a document that is not a mapping ("" for a mapping).
	cfgNull bool
	cfgType string
}

// parseCloudConfig is util.load_yaml on a cloud-config part: a mapping
// (cfg), an empty or null document (cfgNull, cfg empty), another value
// (cfgType names its Python type; cfg is nil) or invalid YAML (cfgErr).
func (pd *pending) parseCloudConfig() {
	pd.parsed = true
	pd.cfg, pd.cfgErr, pd.cfgNull, pd.cfgType = nil, nil, false, ""
	var v any
	v, pd.cfgWarn, pd.cfgErr = yaml11.Load("", pd.Content)
	if pd.cfgErr != nil {
		return
	}
	switch m := v.(type) {
	case nil:
		pd.cfg, pd.cfgNull = map[string]any{}, true
	case map[string]any:
		pd.cfg = m
	default:
		pd.cfgType = pyval.TypeName(v)
	}
}

// loadYAMLWarning is cloud-init's util.load_yaml warning for a document
// whose top level is not a mapping; it returns None instead.
func loadYAMLWarning(typ string) string {
	return fmt.Sprintf("Failed loading yaml blob. Yaml load allows (<class 'dict'>,) root types, but got %s instead", typ)
}

// cloudInitWarning records a warning in cloud-init's own words (no
// source prefix), as its LogExporter records it.
func (p *processor) cloudInitWarning(msg string) {
	p.res.Warnings = append(p.res.Warnings, msg)
}

func (p *processor) errorf(part string, line int, format string, args ...any) {
	p.res.Errors = append(p.res.Errors, &Error{Source: p.source, Part: part, Line: line, Err: fmt.Errorf(format, args...)})
}

func (p *processor) addError(part string, line int, err error) {
	p.res.Errors = append(p.res.Errors, &Error{Source: p.source, Part: part, Line: line, Err: err})
}

func (p *processor) warnf(part string, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if part != "" {
		msg = part + ": " + msg
	}
	p.res.Warnings = append(p.res.Warnings, p.source+": "+msg)
}

// notice records a Notice (see Result.Notices) for a part.
func (p *processor) notice(part, msg string) {
	if part != "" {
		msg = part + ": " + msg
	}
	p.res.Notices = append(p.res.Notices, p.source+": "+msg)
}

// where names a place for errors: the include URL a document came from.
func where(origin string) string {
	if origin == "" {
		return ""
	}
	return "include " + origin
}

// gunzip decompresses within the remaining budget.
func (p *processor) gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	limit := min(p.budget, p.opts.MaxSize)
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("decompressed data %w of %d bytes", ErrTooLarge, limit)
	}
	p.budget -= int64(len(out))
	return out, nil
}

// blob processes one document: the payload, or an included one.
func (p *processor) blob(data []byte, origin string, depth int) {
	if p.ctx.Err() != nil {
		return
	}
	if isGzip(data) {
		out, err := p.gunzip(data)
		switch {
		case errors.Is(err, ErrTooLarge):
			p.addError(where(origin), 0, fmt.Errorf("decompressing: %w", err))
			return
		case err == nil:
			data = out
		}
		// Otherwise it was not gzip after all: use it as is (cloud-init too).
	}
	var leaves []leaf
	if hasMIMEVersion(data) {
		var errs []error
		leaves, errs = parseMessage(data)
		for _, err := range errs {
			p.addError(where(origin), 0, fmt.Errorf("parsing MIME: %w", err))
		}
	} else {
		leaves = []leaf{{ctype: TypeNotMultipart, payload: data}}
	}
	for i, l := range leaves {
		if len(leaves) > 1 || hasMIMEVersion(data) {
			l.label = fmt.Sprintf("MIME part %d", i+1)
		}
		p.leaf(l, origin, depth)
	}
}

// leaf classifies one part: decompress, sniff, expand includes and archives,
// attach the rest.
func (p *processor) leaf(l leaf, origin string, depth int) {
	// A text part is decoded with surrogate escapes by cloud-init, so its
	// header is sniffed even when it is not valid UTF-8 (a cloud-config
	// with a Latin-1 byte is still a cloud-config); a decompressed payload
	// is decoded strictly, and invalid UTF-8 keeps the default type.
	sniff := typeFromText
	if gzipTypes()[l.ctype] {
		sniff = typeFromStartsWith
		out, err := p.gunzip(l.payload)
		if err != nil {
			p.addError(loc(l, origin, ""), 0, fmt.Errorf("failed decompressing payload from %s of length %d: %w", l.ctype, len(l.payload), err))
			return
		}
		l.payload = out
		l.ctype = TypePlain
		// Only the filename and Launch-Index survive decompression.
		var h header
		if v := l.headers.get("Launch-Index"); v != "" {
			h = header{{"Launch-Index", v}}
		}
		l.headers = h
	}
	switch l.ctype {
	case TypePlain, TypeNotMultipart, TypeShellScript:
		l.ctype = sniff(l.payload, l.ctype)
	}
	switch l.ctype {
	case TypeInclude, TypeIncludeOnce:
		p.include(l, origin, depth)
		return
	case TypeCloudConfigArchive:
		p.archive(l, origin)
		return
	}
	p.attach(l, origin)
}

// loc names a part that has no number yet: where it came from and its
// filename or position in the message.
func loc(l leaf, origin, def string) string {
	var parts []string
	if w := where(origin); w != "" {
		parts = append(parts, w)
	}
	switch {
	case l.filename != "":
		parts = append(parts, l.filename)
	case l.label != "":
		parts = append(parts, l.label)
	case def != "":
		parts = append(parts, def)
	}
	return strings.Join(parts, ": ")
}

// attach numbers a part and records its launch index.
func (p *processor) attach(l leaf, origin string) {
	p.count++
	pt := Part{Type: l.ctype, Filename: l.filename, Content: l.payload}
	if pt.Filename == "" {
		pt.Filename = fmt.Sprintf("part-%03d", p.count)
	}
	pt.MergeType = l.headers.get("Merge-Type")
	if pt.MergeType == "" {
		pt.MergeType = l.headers.get("X-Merge-Type")
	}
	for _, kv := range l.headers {
		switch strings.ToLower(kv[0]) {
		case "content-type", "content-disposition", "content-transfer-encoding", "mime-version",
			"launch-index", "merge-type", "x-merge-type", "number-attachments":
			continue
		}
		if pt.Headers == nil {
			pt.Headers = map[string]string{}
		}
		pt.Headers[kv[0]] = kv[1]
	}
	// Launch index: the header wins over a cloud-config's launch-index key.
	pd := pending{Part: pt, origin: origin}
	idx := l.headers.get("Launch-Index")
	if pt.Type == TypeCloudConfig {
		// cloud-init reads launch-index here with util.load_yaml, which
		// warns about a document that is not a mapping (again when the
		// part is handled).
		pd.parseCloudConfig()
		if pd.cfgType != "" {
			p.cloudInitWarning(loadYAMLWarning(pd.cfgType))
		}
		if v, ok := pd.cfg["launch-index"]; idx == "" && ok && v != nil {
			idx = fmt.Sprint(v)
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(idx)); err == nil {
		pd.LaunchIndex = &n
	}
	p.parts = append(p.parts, pd)
}

func (p *processor) filterLaunchIndex() {
	if p.opts.LaunchIndex == nil {
		return
	}
	kept := p.parts[:0]
	for _, pt := range p.parts {
		if pt.LaunchIndex == nil || *pt.LaunchIndex == *p.opts.LaunchIndex {
			kept = append(kept, pt)
		}
	}
	p.parts = kept
}

// emptyCloudConfigWarning is cloud-init's CloudConfigPartHandler warning
// for a part whose YAML loads as None (empty, null, or not a mapping).
func emptyCloudConfigWarning(part string) string {
	return fmt.Sprintf("Failed at merging in cloud config part from %s: empty cloud config", part)
}

// handle gives a part to its handler.
func (p *processor) handle(pt *pending) {
	name := pt.Filename
	switch pt.Type {
	case TypeCloudConfig:
		if !pt.parsed {
			pt.parseCloudConfig()
		}
		cfg := pt.cfg
		// A repeated key keeps its last value, as in cloud-init; say so.
		for _, w := range pt.cfgWarn {
			p.notice(name, w.Message())
		}
		if pt.cfgErr != nil {
			p.res.IgnoredCloudConfigs = append(p.res.IgnoredCloudConfigs, name)
			p.addError(name, 0, fmt.Errorf("invalid #cloud-config: %w", pt.cfgErr))
			return
		}
		if pt.cfgType != "" {
			// load_yaml warns and gives None: the handler refuses the
			// part as empty and names it in cloud-config.txt.
			p.cloudInitWarning(loadYAMLWarning(pt.cfgType))
			p.cloudInitWarning(emptyCloudConfigWarning(name))
			p.res.IgnoredCloudConfigs = append(p.res.IgnoredCloudConfigs, name)
			return
		}
		pt.Config = cfg
		how := cfg["merge_how"]
		if how == nil {
			how = cfg["merge_type"]
		}
		cc := CloudConfig{Part: name, Config: cfg, MergeHow: how, MergeHeader: pt.MergeType}
		if pt.cfgNull {
			// cloud-init's handler refuses it ("empty cloud config"), a
			// warning, and names it in cloud-config.txt.
			cc.Null = true
			p.res.IgnoredCloudConfigs = append(p.res.IgnoredCloudConfigs, name)
			p.cloudInitWarning(emptyCloudConfigWarning(name))
		}
		p.res.CloudConfigs = append(p.res.CloudConfigs, cc)
	case TypeCloudConfigJSONP:
		body := bytes.TrimLeft(pt.Content, " \t\r\n")
		if len(body) >= len("#cloud-config-jsonp") && strings.EqualFold(string(body[:len("#cloud-config-jsonp")]), "#cloud-config-jsonp") {
			body = body[len("#cloud-config-jsonp"):]
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			p.res.IgnoredCloudConfigs = append(p.res.IgnoredCloudConfigs, name)
			p.addError(name, jsonLine(pt.Content, body, err), fmt.Errorf("invalid #cloud-config-jsonp: %w", err))
			return
		}
		if _, err := jsonpatch.DecodePatch(body); err != nil {
			p.addError(name, 0, fmt.Errorf("invalid #cloud-config-jsonp: %w", err))
			return
		}
		p.res.JSONPatches = append(p.res.JSONPatches, JSONPatch{Part: name, After: len(p.res.CloudConfigs), Patch: bytes.TrimSpace(body)})
	case TypeShellScript:
		p.res.InstanceScripts = append(p.res.InstanceScripts, script(name, dos2unix(pt.Content)))
	case TypeShellPerBoot:
		p.res.PerBoot = append(p.res.PerBoot, script(name, dos2unix(pt.Content)))
	case TypeShellPerInstance:
		p.res.PerInstance = append(p.res.PerInstance, script(name, dos2unix(pt.Content)))
	case TypeShellPerOnce:
		p.res.PerOnce = append(p.res.PerOnce, script(name, dos2unix(pt.Content)))
	case TypeBoothook:
		c := dos2unix(pt.Content)
		if len(c) >= len("#cloud-boothook") && strings.EqualFold(string(c[:len("#cloud-boothook")]), "#cloud-boothook") {
			c = c[len("#cloud-boothook"):]
		}
		p.res.Boothooks = append(p.res.Boothooks, script(name, bytes.TrimLeft(c, " \t\r\n\v\f")))
	case TypeJinja:
		p.jinja(pt)
	case TypePartHandler:
		p.warnf(name, "not supported: Python part handlers (%s)", TypePartHandler)
	default:
		if len(pt.Content) == 0 {
			return
		}
		start := firstOrBytes(pt.Content, 24)
		if pt.Type == TypeNotMultipart {
			p.warnf(name, "Unhandled non-multipart (%s) userdata: '%s...'", pt.Type, start)
		} else {
			p.warnf(name, "Unhandled unknown content-type (%s) userdata: '%s...'", pt.Type, start)
		}
	}
}

// jsonLine finds the line in the part of a JSON error in body (a suffix of
// the part's content), or 0.
func jsonLine(content, body []byte, err error) int {
	var se *json.SyntaxError
	off := int64(-1)
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(body)) {
		return 0
	}
	skip := len(content) - len(body)
	return bytes.Count(content[:skip+int(off)], []byte("\n")) + 1
}

// firstOrBytes is the start of a payload for a log line, escaped.
func firstOrBytes(b []byte, n int) string {
	line, _, _ := bytes.Cut(b[:min(len(b), 4*n)], []byte("\n"))
	s := strings.ToValidUTF8(string(line), "\uFFFD")
	if r := []rune(s); len(r) > n {
		s = string(r[:n])
	}
	q := strconv.QuoteToASCII(s)
	return q[1 : len(q)-1]
}

func dos2unix(b []byte) []byte {
	if !bytes.Contains(b, []byte("\r\n")) {
		return b
	}
	return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
}

func script(part string, content []byte) Script {
	return Script{Name: CleanFilename(part), Part: part, Content: content}
}

// CleanFilename makes a part's filename safe as one path element, as
// cloud-init does: "/" becomes "_", and only letters, digits and "_-.()"
// remain. Names that would be empty, "." or ".." become "part".
func CleanFilename(s string) string {
	s = strings.ReplaceAll(s, "/", "_")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("_-.()", r):
			b.WriteRune(r)
		}
	}
	out := b.String()
	if out == "" || out == "." || out == ".." {
		return "part"
	}
	return out
}

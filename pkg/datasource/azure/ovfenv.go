package azure

// Pure parsing of Azure's provisioning document, ovf-env.xml
// (cloud-init's helpers/azure.py OvfEnvXml). It is not the OVF property
// schema of pkg/datasource/ovf: Azure's lives in the windowsazure
// namespace, wa:ProvisioningSection/wa:LinuxProvisioningConfigurationSet
// and wa:PlatformSettingsSection/wa:PlatformSettings.

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// The ovf-env.xml namespaces.
const (
	OVFNamespace = "http://schemas.dmtf.org/ovf/environment/1"
	WANamespace  = "http://schemas.microsoft.com/windowsazure"
)

// OVFFile is the provisioning document's name on the media and in the
// seed and agent directories.
const OVFFile = "ovf-env.xml"

// PasswordRedaction replaces UserPassword in the copy of ovf-env.xml kept
// on disk (cloud-init's DEF_PASSWD_REDACTION; it fails Azure's password
// rules, so it is never a real password).
const PasswordRedaction = "REDACTED"

// ErrNotAzureOVF means the document has no (non-empty)
// wa:ProvisioningSection: it is some other OVF environment, and the next
// candidate is tried (cloud-init's NonAzureDataSource).
var ErrNotAzureOVF = errors.New("not an Azure ovf-env.xml: ProvisioningSection not found")

// maxXMLDepth bounds element nesting.
const maxXMLDepth = 64

// Secret is a value never to be shown: fmt, slog and JSON print
// PasswordRedaction. string(s) reveals it.
type Secret string

func (Secret) String() string               { return PasswordRedaction }
func (Secret) GoString() string             { return PasswordRedaction }
func (Secret) LogValue() slog.Value         { return slog.StringValue(PasswordRedaction) }
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + PasswordRedaction + `"`), nil }

// PublicKey is one wa:SSH/wa:PublicKeys/wa:PublicKey: a key given by value,
// or by the fingerprint of a certificate the wireserver holds.
type PublicKey struct {
	Fingerprint string
	Path        string
	Value       string
}

// OVFEnv is what an Azure ovf-env.xml says. Empty strings stand for
// cloud-init's None.
type OVFEnv struct {
	UserName string
	// Password is UserPassword as given (plain text on Azure).
	Password Secret
	HostName string
	// CustomData is the base64-decoded wa:CustomData (user-data), nil
	// when absent or empty.
	CustomData []byte
	// DisableSSHPasswordAuth is DisableSshPasswordAuthentication read as
	// cloud-init's translate_bool (absent is false).
	DisableSSHPasswordAuth bool
	PublicKeys             []PublicKey
	// PreprovisionedVM, PreprovisionedVMType and ProvisionGuestProxyAgent
	// are the platform settings.
	PreprovisionedVM         bool
	PreprovisionedVMType     string
	ProvisionGuestProxyAgent bool
}

// OVFError is a document that parses as XML but breaks Azure's schema, at
// the line of the element concerned.
type OVFError struct {
	Line int
	Msg  string
}

func (e *OVFError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// element is a parsed XML element: its name, the text before its first
// child (ElementTree's .text) and its children.
type element struct {
	name xml.Name
	text strings.Builder
	kids []*element
	line int
}

// parseXML builds the element tree of a document. Syntax errors are
// *xml.SyntaxError (they carry the line).
func parseXML(b []byte) (*element, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	var root *element
	var stack []*element
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if !errors.As(err, &se) {
				// Declarations the decoder refuses (version, encoding).
				err = &xml.SyntaxError{Line: line, Msg: strings.TrimPrefix(err.Error(), "xml: ")}
			}
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			e := &element{name: t.Name, line: line}
			switch {
			case len(stack) > 0:
				p := stack[len(stack)-1]
				p.kids = append(p.kids, e)
			case root != nil:
				return nil, &xml.SyntaxError{Line: line, Msg: "more than one root element"}
			default:
				root = e
			}
			if len(stack) >= maxXMLDepth {
				return nil, &xml.SyntaxError{Line: line, Msg: fmt.Sprintf("elements nested deeper than %d", maxXMLDepth)}
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				if p := stack[len(stack)-1]; len(p.kids) == 0 {
					p.text.Write(t)
				}
			} else if len(bytes.TrimSpace(t)) > 0 {
				return nil, &xml.SyntaxError{Line: line, Msg: "text outside the root element"}
			}
		}
	}
	if root == nil {
		return nil, &xml.SyntaxError{Line: 1, Msg: "no root element"}
	}
	return root, nil
}

// children are e's direct children named local in the wa namespace.
func (e *element) children(local string) []*element {
	var out []*element
	for _, k := range e.kids {
		if k.name.Space == WANamespace && k.name.Local == local {
			out = append(out, k)
		}
	}
	return out
}

// find is cloud-init's _find: the single child named local; absent is nil
// (an error when required), more than one is an error.
func (e *element) find(local string, required bool) (*element, error) {
	m := e.children(local)
	switch {
	case len(m) == 0 && required:
		return nil, &OVFError{Line: e.line, Msg: fmt.Sprintf("missing configuration for %q in %s", local, e.name.Local)}
	case len(m) > 1:
		return nil, &OVFError{Line: m[1].line, Msg: fmt.Sprintf("multiple configuration matches for %q (%d)", local, len(m))}
	case len(m) == 0:
		return nil, nil
	}
	return m[0], nil
}

// prop is cloud-init's _parse_property without decoding: the child's
// text, "" when absent or empty.
func (e *element) prop(local string, required bool) (string, *element, error) {
	k, err := e.find(local, required)
	if err != nil || k == nil {
		return "", nil, err
	}
	return k.text.String(), k, nil
}

// translateBool is cloud-init's util.translate_bool for strings.
func translateBool(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "on", "yes":
		return true
	}
	return false
}

// ParseOVFEnv reads Azure's ovf-env.xml. A document without a non-empty
// wa:ProvisioningSection is ErrNotAzureOVF; XML syntax errors are
// *xml.SyntaxError and schema errors *OVFError, both with the line.
func ParseOVFEnv(b []byte) (*OVFEnv, error) {
	root, err := parseXML(b)
	if err != nil {
		return nil, err
	}
	if ps := root.children("ProvisioningSection"); len(ps) == 0 || len(ps[0].kids) == 0 {
		return nil, ErrNotAzureOVF
	}
	env := &OVFEnv{}
	if err := env.linuxSet(root); err != nil {
		return nil, err
	}
	if err := env.platformSettings(root); err != nil {
		return nil, err
	}
	return env, nil
}

func (env *OVFEnv) linuxSet(root *element) error {
	ps, err := root.find("ProvisioningSection", true)
	if err != nil {
		return err
	}
	cs, err := ps.find("LinuxProvisioningConfigurationSet", true)
	if err != nil {
		return err
	}
	cd, cdElem, err := cs.prop("CustomData", false)
	if err != nil {
		return err
	}
	if cd != "" {
		if env.CustomData, err = datasource.DecodeBase64(cd); err != nil {
			return &OVFError{Line: cdElem.line, Msg: fmt.Sprintf("CustomData is not base64: %v", err)}
		}
	}
	if env.UserName, _, err = cs.prop("UserName", true); err != nil {
		return err
	}
	pw, _, err := cs.prop("UserPassword", false)
	if err != nil {
		return err
	}
	env.Password = Secret(pw)
	if env.HostName, _, err = cs.prop("HostName", true); err != nil {
		return err
	}
	dis, _, err := cs.prop("DisableSshPasswordAuthentication", false)
	if err != nil {
		return err
	}
	env.DisableSSHPasswordAuth = translateBool(dis)
	return env.sshKeys(cs)
}

func (env *OVFEnv) sshKeys(cs *element) error {
	ssh, err := cs.find("SSH", false)
	if err != nil || ssh == nil {
		return err
	}
	pks, err := ssh.find("PublicKeys", false)
	if err != nil || pks == nil {
		return err
	}
	for _, k := range pks.children("PublicKey") {
		var pk PublicKey
		if pk.Fingerprint, _, err = k.prop("Fingerprint", false); err != nil {
			return err
		}
		if pk.Path, _, err = k.prop("Path", false); err != nil {
			return err
		}
		if pk.Value, _, err = k.prop("Value", false); err != nil {
			return err
		}
		env.PublicKeys = append(env.PublicKeys, pk)
	}
	return nil
}

func (env *OVFEnv) platformSettings(root *element) error {
	pss, err := root.find("PlatformSettingsSection", true)
	if err != nil {
		return err
	}
	ps, err := pss.find("PlatformSettings", true)
	if err != nil {
		return err
	}
	v, _, err := ps.prop("PreprovisionedVm", false)
	if err != nil {
		return err
	}
	env.PreprovisionedVM = translateBool(v)
	if env.PreprovisionedVMType, _, err = ps.prop("PreprovisionedVMType", false); err != nil {
		return err
	}
	v, _, err = ps.prop("ProvisionGuestProxyAgent", false)
	if err != nil {
		return err
	}
	env.ProvisionGuestProxyAgent = translateBool(v)
	return nil
}

// RedactPassword returns ovf-env.xml with the text of every element whose
// name contains UserPassword replaced by PasswordRedaction, the rest of
// the document unchanged (what cloud-init keeps in /var/lib/waagent).
// A document that does not parse is returned as is with an error.
func RedactPassword(b []byte) ([]byte, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	type span struct{ start, end int64 }
	var spans []span
	depth, in := 0, 0 // in: depth of the password element being read
	var start int64
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return b, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if in == 0 && strings.Contains(t.Name.Local, "UserPassword") {
				in, start = depth, dec.InputOffset()
			}
		case xml.EndElement:
			if in == depth {
				spans = append(spans, span{start, off})
				in = 0
			}
			depth--
		}
	}
	if len(spans) == 0 {
		return b, nil
	}
	var out bytes.Buffer
	prev := int64(0)
	for _, s := range spans {
		out.Write(b[prev:s.start])
		out.WriteString(PasswordRedaction)
		prev = s.end
	}
	out.Write(b[prev:])
	return out.Bytes(), nil
}

// MinimalOVF is the ovf-env.xml cloud-init writes to the agent directory
// when provisioning from IMDS alone (build_minimal_ovf); disableSSHPwd is
// printed as Python prints True/False/None.
func MinimalOVF(username, hostname, disableSSHPwd string) []byte {
	var b bytes.Buffer
	esc := func(s string) string {
		var e bytes.Buffer
		_ = xml.EscapeText(&e, []byte(s))
		return e.String()
	}
	fmt.Fprintf(&b, `<ns0:Environment xmlns:ns0="%s"
 xmlns:ns1="%s"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <ns1:ProvisioningSection>
    <ns1:Version>1.0</ns1:Version>
    <ns1:LinuxProvisioningConfigurationSet>
      <ns1:ConfigurationSetType>LinuxProvisioningConfiguration
      </ns1:ConfigurationSetType>
      <ns1:UserName>%s</ns1:UserName>
      <ns1:DisableSshPasswordAuthentication>%s
      </ns1:DisableSshPasswordAuthentication>
      <ns1:HostName>%s</ns1:HostName>
    </ns1:LinuxProvisioningConfigurationSet>
  </ns1:ProvisioningSection>
  <ns1:PlatformSettingsSection>
    <ns1:Version>1.0</ns1:Version>
    <ns1:PlatformSettings>
      <ns1:ProvisionGuestAgent>true</ns1:ProvisionGuestAgent>
    </ns1:PlatformSettings>
  </ns1:PlatformSettingsSection>
</ns0:Environment>
`, OVFNamespace, WANamespace, esc(username), esc(disableSSHPwd), esc(hostname))
	return b.Bytes()
}

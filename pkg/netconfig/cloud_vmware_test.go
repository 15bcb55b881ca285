package netconfig

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The vmware cases' metadata.json is {"cust.cfg": [lines]}: the INI file,
// one line per item. Without macs.txt the NICs keep their section names, as
// with net-convert.
func init() {
	cloudConverters["vmware"] = func(md []byte, _ cloudCase, links Links) (*Config, error) {
		cust, err := vmwareFixture(md)
		if err != nil {
			return nil, err
		}
		if m, ok := links.(MACs); ok && len(m) == 0 {
			links = nil
		}
		return ConvertVMware(cust, links)
	}
}

func vmwareFixture(md []byte) (VMwareCustCfg, error) {
	var doc struct {
		Lines []string `json:"cust.cfg"`
	}
	if err := json.Unmarshal(md, &doc); err != nil {
		return nil, err
	}
	return ParseVMwareCustCfg([]byte(strings.Join(doc.Lines, "\n") + "\n"))
}

func TestParseVMwareCustCfg(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     VMwareCustCfg
		err      string
	}{
		{"basic", "[NETWORK]\nHOSTNAME = myhost\n# comment\n; comment\n[nic1]\nMACADDR: 00:50:56:A6:8C:08\n",
			VMwareCustCfg{"NETWORK|HOSTNAME": "myhost", "nic1|MACADDR": "00:50:56:A6:8C:08"}, ""},
		{"case kept, first delimiter wins", "[S]\nKey=a=b:c\nkey:x=y\n",
			VMwareCustCfg{"S|Key": "a=b:c", "S|key": "x=y"}, ""},
		{"continuation and blank lines", "[S]\nA = one\n  two\n\n  three\n\nB = b\n",
			VMwareCustCfg{"S|A": "one\ntwo\n\nthree", "S|B": "b"}, ""},
		{"defaults and interpolation", "[DEFAULT]\nbase = 10.0\n[S]\nIP = %(base)s.0.1\nPCT = 100%%\n",
			VMwareCustCfg{"S|base": "10.0", "S|IP": "10.0.0.1", "S|PCT": "100%"}, ""},
		{"crlf and cr", "[S]\r\nA=1\rB=2\r\n", VMwareCustCfg{"S|A": "1", "S|B": "2"}, ""},
		{"empty value", "[S]\nA =\n", VMwareCustCfg{"S|A": ""}, ""},
		{"header text after bracket", "[S] trailing\nA=1\n", VMwareCustCfg{"S|A": "1"}, ""},
		{"no section", "A=1\n", nil, "no section headers"},
		{"duplicate section", "[S]\n[S]\n", nil, "already exists"},
		{"duplicate option", "[S]\nA=1\nA=2\n", nil, "already exists"},
		{"no delimiter", "[S]\njunk\n", nil, "parsing errors"},
		{"bad interpolation", "[S]\nA=50%\n", nil, "must be followed"},
		{"missing reference", "[S]\nA=%(nope)s\n", nil, "bad interpolation reference"},
		{"recursive reference", "[S]\nA=%(A)s\n", nil, "too deeply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseVMwareCustCfg([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseVMwareCustCfg(f *testing.F) {
	f.Add([]byte("[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:a6:8c:08\nBOOTPROTO = dhcp\n"))
	f.Add([]byte("[DEFAULT]\na=%(b)s\nb = 1%%\n[S]\nc:\n  d\n\n  e\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseVMwareCustCfg(data)
		if err != nil {
			return
		}
		for k := range cfg {
			if !strings.Contains(k, "|") {
				t.Fatalf("key %q has no section", k)
			}
		}
		for _, links := range []Links{nil, fuzzCloudMACs} {
			if c, err := ConvertVMware(cfg, links); err == nil {
				renderAll(t, c)
			}
		}
	})
}

func FuzzConvertVMware(f *testing.F) {
	seedCloud(f, "vmware")
	f.Fuzz(func(t *testing.T, data []byte) {
		cust, err := vmwareFixture(data)
		if err != nil {
			return
		}
		for _, links := range []Links{nil, fuzzCloudMACs} {
			if c, err := ConvertVMware(cust, links); err == nil {
				renderAll(t, c)
			}
		}
	})
}

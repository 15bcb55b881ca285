package modules

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRsyslogShapes: the rsyslog forms and wrong types as cc_rsyslog's
// load_config reads them (the deprecated list with its sibling keys,
// items of both shapes, cloud-init's type messages in key order).
func TestRsyslogShapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		wantErr string
		want    []rsyslogEntry
		file    string
	}{
		{"list form with filename", Config{"rsyslog": []any{"a", map[string]any{"content": "b", "filename": "x.conf"}}, "rsyslog_filename": "f.conf"}, "",
			[]rsyslogEntry{{Content: "a", HasBody: true}, {Content: "b", Filename: "x.conf", HasBody: true}}, "f.conf"},
		{"list form, filename null", Config{"rsyslog": []any{}, "rsyslog_filename": nil}, "Invalid type for key `config_filename`. Expected type(s): <class 'str'>. Current type: <class 'NoneType'>", nil, ""},
		{"item without content or filename", Config{"rsyslog": map[string]any{"configs": []any{map[string]any{"filename": nil}, 3}}}, "",
			[]rsyslogEntry{{}, {Content: "3", HasBody: true}}, "20-cloud-config.conf"},
		{"wrong types in key order", Config{"rsyslog": map[string]any{"remotes": []any{}, "configs": "x", "install_rsyslog": "yes"}},
			"Invalid type for key `configs`. Expected type(s): <class 'list'>. Current type: <class 'str'>\n" +
				"Invalid type for key `remotes`. Expected type(s): <class 'dict'>. Current type: <class 'list'>\n" +
				"Invalid type for key `install_rsyslog`. Expected type(s): <class 'bool'>. Current type: <class 'str'>", nil, ""},
		{"null rsyslog", Config{"rsyslog": nil}, "", nil, "20-cloud-config.conf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := testContext(t, tc.cfg, nil)
			var k rsyslogKeys
			if err := c.decoder().Decode(c.Config, &k); err != nil {
				t.Fatal(err)
			}
			rc, err := decodeRsyslog(c, k)
			if got := errString(err); got != tc.wantErr {
				t.Fatalf("error %q, want %q", got, tc.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, rc.Configs); diff != "" || rc.ConfigFilename != tc.file {
				t.Errorf("configs (-want +got):\n%s\nfilename %q", diff, rc.ConfigFilename)
			}
		})
	}
}

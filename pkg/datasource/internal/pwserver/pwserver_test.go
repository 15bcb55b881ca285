package pwserver

import "testing"

func TestPortAndParse(t *testing.T) {
	for _, tc := range []struct {
		cfg  map[string]any
		over int
		want int
	}{
		{nil, 0, 8080}, {map[string]any{"password_server_port": 9090}, 0, 9090},
		{map[string]any{"password_server_port": "7070"}, 1, 7070}, {map[string]any{"password_server_port": 99999}, 6060, 6060},
		{map[string]any{"password_server_port": 5050.0}, 0, 5050},
	} {
		if got := Port(tc.cfg, tc.over, 8080); got != tc.want {
			t.Errorf("Port(%v, %d) = %d, want %d", tc.cfg, tc.over, got, tc.want)
		}
	}
	for in, want := range map[string]string{"secret\n": "secret", "": "", "saved_password": ""} {
		if got, ok := Parse([]byte(in)); got != want || ok != (want != "") {
			t.Errorf("Parse(%q) = %q, %v", in, got, ok)
		}
	}
	if u, err := URL("http://10.1.1.1/latest/", 8080, "/"); err != nil || u != "http://10.1.1.1:8080/" {
		t.Errorf("URL = %q, %v", u, err)
	}
}

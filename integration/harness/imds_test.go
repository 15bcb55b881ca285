package harness

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestServeFiles(t *testing.T) {
	s, err := ServeFiles(map[string][]byte{"/include.yaml": []byte("#cloud-config\n")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || s.Port() <= 0 {
		t.Fatalf("URL %s port %d, want 127.0.0.1 and a port", s.URL(), s.Port())
	}
	get := func(p string) (int, string) {
		resp, err := http.Get(s.URL() + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/include.yaml"); code != 200 || body != "#cloud-config\n" {
		t.Errorf("GET /include.yaml = %d %q", code, body)
	}
	if code, _ := get("/missing"); code != 404 {
		t.Errorf("GET /missing = %d, want 404", code)
	}
	get("/include.yaml")
	if n := s.Count("/include.yaml"); n != 2 {
		t.Errorf("Count(/include.yaml) = %d, want 2", n)
	}
	if n := s.Total(); n != 3 {
		t.Errorf("Total = %d, want 3", n)
	}
	if got := s.String(); got != "/include.yaml=2 /missing=1" {
		t.Errorf("String = %q", got)
	}
	if n := len(strings.Split(s.Log(), "\n")); n != 3 {
		t.Errorf("Log has %d lines, want 3:\n%s", n, s.Log())
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestArgsGuestFwd(t *testing.T) {
	base := BootOptions{Kernel: "/k", Initramfs: "/i", Disk: "/d"}
	o := base
	o.GuestFwd = []GuestFwd{{GuestIP: "169.254.169.254", GuestPort: 80, HostPort: 8169}, {GuestIP: "169.254.169.1", GuestPort: 8080, HostPort: 9000}}
	args, err := o.Args()
	if err != nil {
		t.Fatal(err)
	}
	want := "user,id=n0,restrict=on,net=169.254.0.0/16," +
		"guestfwd=tcp:169.254.169.254:80-cmd:nc 127.0.0.1 8169," +
		"guestfwd=tcp:169.254.169.1:8080-cmd:nc 127.0.0.1 9000"
	if got := argAfter(args, "-netdev"); got != want {
		t.Errorf("-netdev %q, want %q", got, want)
	}
	args, err = base.Args()
	if err != nil {
		t.Fatal(err)
	}
	if got := argAfter(args, "-netdev"); got != "user,id=n0,restrict=on" {
		t.Errorf("without GuestFwd: -netdev %q, want the default", got)
	}
	for _, bad := range []GuestFwd{
		{GuestIP: "", GuestPort: 80, HostPort: 1},
		{GuestIP: "fe80::1", GuestPort: 80, HostPort: 1},
		{GuestIP: "169.254.169.254,x", GuestPort: 80, HostPort: 1},
		{GuestIP: "169.254.169.254", GuestPort: 0, HostPort: 1},
		{GuestIP: "169.254.169.254", GuestPort: 80, HostPort: 70000},
	} {
		o := base
		o.GuestFwd = []GuestFwd{bad}
		if _, err := o.Args(); err == nil {
			t.Errorf("GuestFwd %+v accepted", bad)
		}
	}
}

func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return fmt.Sprintf("<no %s>", flag)
}

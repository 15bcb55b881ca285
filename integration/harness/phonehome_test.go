package harness

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPostRecorder(t *testing.T) {
	s, err := ServePosts(500, 503)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u := fmt.Sprintf("http://127.0.0.1:%d/phone_home/iid-1?unset=admin_pass", s.Port())
	var codes []int
	for range 3 {
		resp, err := http.Post(u, "application/x-www-form-urlencoded", strings.NewReader("instance_id=iid-1&hostname=h%201&pub_key_rsa=ssh-rsa+AAA%3D"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	if diff := cmp.Diff([]int{500, 503, 200}, codes); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	ps := s.Posts()
	if len(ps) != 3 {
		t.Fatalf("%d posts recorded, want 3", len(ps))
	}
	p := ps[2]
	if p.Method != "POST" || p.Path != "/phone_home/iid-1" || p.Query.Get("unset") != "admin_pass" || p.Status != 200 {
		t.Errorf("post = %+v", p)
	}
	if diff := cmp.Diff(url.Values{"instance_id": {"iid-1"}, "hostname": {"h 1"}, "pub_key_rsa": {"ssh-rsa AAA="}}, p.Form); diff != "" {
		t.Errorf("form (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"instance_id", "hostname", "pub_key_rsa"}, p.Order); diff != "" {
		t.Errorf("field order (-want +got):\n%s", diff)
	}
}

func TestLineSink(t *testing.T) {
	s, err := ListenLines()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", s.Port()))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(c)
	fmt.Fprint(w, "<13>first line\n<13>second\n")
	w.Flush()
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.Lines()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if diff := cmp.Diff([]string{"<13>first line", "<13>second"}, s.Lines()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

package volscan

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

// TestScan: the order (seed, then devices), and what each answer of Read
// and of the opener does to the search.
func TestScan(t *testing.T) {
	a := bootenv.Device{Path: "/dev/a"}
	b := bootenv.Device{Path: "/dev/b"}
	broken := errors.New("broken")
	for _, tc := range []struct {
		name     string
		answers  map[string]error // by place; nil: found
		quiet    bool
		want     string // "" found at wantAt
		wantAt   string
		notFound bool
	}{
		{name: "seed first", answers: map[string]error{"/seed": nil, "/dev/a": nil}, wantAt: "/seed"},
		{name: "nothing here goes on", answers: map[string]error{"/seed": datasource.ErrNotFound, "/dev/a": datasource.ErrNotFound, "/dev/b": nil}, wantAt: "/dev/b"},
		{name: "recorded goes on", answers: map[string]error{"/seed": broken, "/dev/a": nil}, wantAt: "/dev/a"},
		{name: "recorded when nothing found", answers: map[string]error{"/seed": broken, "/dev/a": datasource.ErrNotFound, "/dev/b": datasource.ErrNotFound}, want: "t: broken"},
		{name: "stop ends", answers: map[string]error{"/seed": datasource.ErrNotFound, "/dev/a": Stop(broken), "/dev/b": nil}, want: "t: broken"},
		{name: "not found names places", answers: map[string]error{"/seed": datasource.ErrNotFound, "/dev/a": datasource.ErrNotFound, "/dev/b": datasource.ErrNotFound},
			want: "t: no thing (looked at /seed, /dev/a, /dev/b; hint)", notFound: true},
		{name: "unopenable recorded", answers: map[string]error{"/seed": datasource.ErrNotFound, "/dev/b": datasource.ErrNotFound}, want: "t: cannot open /dev/a"},
		{name: "unopenable quiet", answers: map[string]error{"/seed": datasource.ErrNotFound, "/dev/b": datasource.ErrNotFound}, quiet: true,
			want: "looked at /seed, /dev/a, /dev/b", notFound: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := datasource.Env{
				Root:    fstest.MapFS{"seed/x": {}},
				Devices: []bootenv.Device{a, b},
				OpenFS: func(d bootenv.Device) (fs.FS, func(), error) {
					if _, ok := tc.answers[d.Path]; !ok {
						return nil, nil, errors.New("cannot open " + d.Path)
					}
					return fstest.MapFS{}, func() {}, nil
				},
			}
			s := Scan{Name: "T", Tag: "t", What: "thing", Hint: "hint", SeedDir: "/seed", Devices: env.Devices, Budget: time.Minute,
				Read: func(_ fs.FS, where string, seed bool) (*datasource.Data, error) {
					if seed != (where == "/seed") {
						t.Errorf("%s: seed %v", where, seed)
					}
					if err := tc.answers[where]; err != nil {
						return nil, err
					}
					return &datasource.Data{Subplatform: where}, nil
				}}
			if tc.quiet {
				s.Quiet = func(bootenv.Device) bool { return true }
			}
			d, err := s.Get(context.Background(), env)
			if tc.want == "" {
				if err != nil || d.Subplatform != tc.wantAt {
					t.Fatalf("got %v, %v; want found at %s", d, err, tc.wantAt)
				}
				return
			}
			if d != nil || err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, datasource.ErrNotFound) != tc.notFound {
				t.Fatalf("got %v, %v; want an error containing %q (not found: %v)", d, err, tc.want, tc.notFound)
			}
		})
	}
}

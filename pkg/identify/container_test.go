package identify

import (
	"testing"
	"testing/fstest"
)

func TestContainerVirt(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   fstest.MapFS
		want string
	}{
		{"none", fstest.MapFS{"proc/1/environ": {Data: []byte("PATH=/bin\x00")}}, ""},
		{"nspawn marker", fstest.MapFS{"run/systemd/container": {Data: []byte("systemd-nspawn\n")}}, "systemd-nspawn"},
		{"lxc environ", fstest.MapFS{"proc/1/environ": {Data: []byte("HOME=/\x00container=lxc\x00")}}, "lxc"},
		{"unknown", fstest.MapFS{"run/systemd/container": {Data: []byte("acme\n")}}, "container-other"},
		{"docker", fstest.MapFS{".dockerenv": {}}, "docker"},
		{"podman", fstest.MapFS{"run/.containerenv": {}}, "podman"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ContainerVirt(tc.fs); got != tc.want {
				t.Errorf("ContainerVirt = %q, want %q", got, tc.want)
			}
		})
	}
}

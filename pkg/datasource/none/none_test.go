package none

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cloudroot/cloudroot/pkg/datasource"
)

func TestGet(t *testing.T) {
	d, err := (&Source{}).Get(context.Background(), datasource.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID() != InstanceID || d.Description() != "DataSourceNone" || d.UserData != nil {
		t.Errorf("default: iid %q desc %q ud %q", d.InstanceID(), d.Description(), d.UserData)
	}

	env := datasource.Env{Config: map[string]any{"None": map[string]any{
		"metadata":     map[string]any{"local-hostname": "fallback", "instance-id": "ignored"},
		"userdata_raw": "#cloud-config\nruncmd: [true]\n",
	}}}
	d, err = (&Source{}).Get(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"local-hostname": "fallback", "instance-id": InstanceID}, d.MetaData); diff != "" {
		t.Errorf("meta-data (-want +got):\n%s", diff)
	}
	if string(d.UserData) != "#cloud-config\nruncmd: [true]\n" {
		t.Errorf("user-data %q", d.UserData)
	}

	for key, bad := range map[string]any{"metadata": []any{1}, "userdata_raw": 3} {
		_, err := (&Source{}).Get(context.Background(), datasource.Env{Config: map[string]any{"None": map[string]any{key: bad}}})
		if err == nil || !strings.Contains(err.Error(), "datasource.None."+key) {
			t.Errorf("bad %s: %v", key, err)
		}
	}
}

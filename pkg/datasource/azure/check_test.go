package azure

import (
	"testing"

	"github.com/cloudroot/cloudroot/pkg/bootenv"
	"github.com/cloudroot/cloudroot/pkg/datasource"
)

func TestCheckInstanceID(t *testing.T) {
	const uuid = "0fa8dfa4-1a6b-4c86-9c59-6e5b5c2ac2a3"
	env := datasource.Env{DMI: bootenv.DMI{ProductUUID: uuid}}
	for _, tc := range []struct {
		iid  string
		want bool
	}{
		{uuid, true},
		{"A4DFA80F-6B1A-864C-9C59-6E5B5C2AC2A3", true}, // byte-swapped, as older Azure reported it
		{"a4dfa80f-6b1a-864c-9c59-6e5b5c2ac2a4", false},
		{"", false},
	} {
		d := &datasource.Data{MetaData: map[string]any{"instance-id": tc.iid}}
		if got := (&Source{}).CheckInstanceID(env, d); got != tc.want {
			t.Errorf("CheckInstanceID(%q) = %v, want %v", tc.iid, got, tc.want)
		}
	}
}

package render

import "testing"

func TestRenderBasic(t *testing.T) {
	got, err := Basic("http://h/$INSTANCE_ID/${INSTANCE_ID}x", map[string]string{"INSTANCE_ID": "i-1"})
	if err != nil || got != "http://h/i-1/i-1x" {
		t.Errorf("%q %v", got, err)
	}
	if _, err := Basic("http://h/$OTHER", map[string]string{"INSTANCE_ID": "i-1"}); err == nil {
		t.Error("unknown variable: no error")
	}
}

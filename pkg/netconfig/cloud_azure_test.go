package netconfig

import "testing"

func init() { cloudConverters["azure"] = jsonConverter(ConvertAzure) }

func TestNormalizeAzureMAC(t *testing.T) {
	for in, want := range map[string]string{
		"000D3A047598":      "00:0d:3a:04:75:98",
		"00:0D:3A:04:75:98": "00:0d:3a:04:75:98",
		"abc":               "abc",
	} {
		if got := normalizeAzureMAC(in); got != want {
			t.Errorf("normalizeAzureMAC(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzConvertAzure(f *testing.F) { fuzzJSONConverter(f, "azure", ConvertAzure) }

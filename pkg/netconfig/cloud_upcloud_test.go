package netconfig

import "testing"

func init() { cloudConverters["upcloud"] = jsonConverter(ConvertUpCloud) }

func FuzzConvertUpCloud(f *testing.F) { fuzzJSONConverter(f, "upcloud", ConvertUpCloud) }

package cli

// cloud-id: the canonical cloud id of this instance, as cloud-init 26.x's
// cloudinit/cmd/cloud_id.py prints it. Answers both as `cloud-id` (argv0)
// and as `cloud-init cloud-id`.
//
//   - not started / disabled (status's running status): that word, exit 3 / 2;
//   - instance-data.json missing: "Error:\nFile not found '<path>'. ..."
//     on stderr, exit 1; not JSON: "Error:\nFile '<path>' is not valid
//     json. <decoder message>" (the decoder's words are Go's), exit 1;
//   - --json: v1 plus cloud_id as json.dumps(indent=1, sort_keys), and
//     "DEPRECATED: Use: cloud-init query v1" on stderr; --long: id TAB region.

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/cloudroot/cloudroot/pkg/internal/pyval"
	"github.com/cloudroot/cloudroot/pkg/state"
)

func cloudIDCommand() Command {
	return Command{
		Name:  "cloud-id",
		Short: "Report the canonical cloud-id for this instance.",
		Run:   runCloudID,
	}
}

const cloudIDUsage = "usage: cloud-id [-h] [-j] [-l] [-i INSTANCE_DATA]\n"

// metadataUnknown is cloud-init's METADATA_UNKNOWN.
const metadataUnknown = "unknown"

// cloudIDRegionPrefixes is cloud-init's CLOUD_ID_REGION_PREFIX_MAP: a
// region prefix turns a cloud's id into another, for that cloud only.
var cloudIDRegionPrefixes = []struct{ prefix, id, cloud string }{
	{"cn-", "aws-china", "aws"},
	{"us-gov-", "aws-gov", "aws"},
	{"china", "azure-china", "azure"},
}

// canonicalCloudID is cloud-init's canonical_cloud_id over decoded JSON
// values (nil for a missing or null key).
func canonicalCloudID(cloudName, region, platform any) any {
	name, _ := cloudName.(string)
	if cloudName == nil || name == "" {
		cloudName, name = metadataUnknown, metadataUnknown
	}
	reg, _ := region.(string)
	if region == nil || reg == "" {
		reg = metadataUnknown
	}
	if reg == metadataUnknown {
		if name != metadataUnknown {
			return cloudName
		}
		return platform
	}
	for _, p := range cloudIDRegionPrefixes {
		if strings.HasPrefix(reg, p.prefix) && name == p.cloud {
			return p.id
		}
	}
	if name != metadataUnknown {
		return cloudName
	}
	return platform
}

func runCloudID(_ context.Context, env *Env, args []string) int {
	var asJSON, long bool
	path := state.RunDir + "/instance-data.json"
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-j" || a == "--json":
			asJSON = true
		case a == "-l" || a == "--long":
			long = true
		case a == "-i" || a == "--instance-data":
			if i+1 >= len(args) {
				fmt.Fprintf(env.Stderr, "%scloud-id: error: argument -i/--instance-data: expected one argument\n", cloudIDUsage)
				return 2
			}
			i++
			path = args[i]
		case strings.HasPrefix(a, "--instance-data="):
			path = strings.TrimPrefix(a, "--instance-data=")
		case a == "-h" || a == "--help":
			fmt.Fprint(env.Stdout, cloudIDUsage+"\nReport the canonical cloud-id for this instance\n\noptions:\n"+
				"  -h, --help            show this help message and exit\n"+
				"  -j, --json            Report all standardized cloud-id information as json.\n"+
				"  -l, --long            Report extended cloud-id information as tab-delimited\n                        string.\n"+
				"  -i, --instance-data INSTANCE_DATA\n                        Path to instance-data.json file. Default is\n                        /run/cloud-init/instance-data.json\n")
			return 0
		default:
			fmt.Fprintf(env.Stderr, "%scloud-id: error: unrecognized arguments: %s\n", cloudIDUsage, a)
			return 2
		}
	}
	d, err := readStatusDetails(env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "cloud-id: error: %s\n", err)
		return 1
	}
	switch d.running {
	case runDisabled:
		fmt.Fprintf(env.Stdout, "%s\n", runDisabled)
		return 2
	case runNotStarted:
		fmt.Fprintf(env.Stdout, "%s\n", runNotStarted)
		return 3
	}
	b, err := os.ReadFile(hostPath(env, path))
	if err != nil {
		fmt.Fprintf(env.Stderr, "Error:\nFile not found '%s'. Provide a path to instance data json file using --instance-data\n", path)
		return 1
	}
	doc, err := decodeOrderedJSON(b)
	if err != nil {
		fmt.Fprintf(env.Stderr, "Error:\nFile '%s' is not valid json. %s\n", path, err)
		return 1
	}
	v1 := newJSONObject()
	if top, ok := doc.(*jsonObject); ok {
		if o, ok := top.get("v1").(*jsonObject); ok {
			v1 = o
		}
	}
	get := func(k string) any {
		if v, ok := v1.lookup(k); ok {
			return v
		}
		return metadataUnknown
	}
	id := canonicalCloudID(get("cloud_name"), get("region"), get("platform"))
	switch {
	case asJSON:
		fmt.Fprint(env.Stderr, "DEPRECATED: Use: cloud-init query v1\n")
		v1.set("cloud_id", id)
		fmt.Fprintf(env.Stdout, "%s\n", jsonDumps(v1))
	case long:
		fmt.Fprintf(env.Stdout, "%s\t%s\n", pyval.Str(id), pyval.Str(get("region")))
	default:
		fmt.Fprintf(env.Stdout, "%s\n", pyval.Str(id))
	}
	return 0
}

"""Run upstream cloud-init's command line as the program `cloud-init`.

scripts/goldens/cli-args.sh runs this through scripts/upstream-cloudinit.sh
(`--python scripts/goldens/lib/cli-main.py ARGS...`): argparse's prog is then
"cloud-init", as on an installed system called by that name, instead of
the path of cloudinit/cmd/main.py that `python3 -m` would give.
"""
import sys

from cloudinit.cmd import main

sys.exit(main.main(["cloud-init"] + sys.argv[1:]))

# Builds the tree `clean` works on, under $R ("" in upstream's sandbox, a
# temp dir in cloudroot's test). $CASE_FAIL set: a failing clean.d part.
set -e
R=${R:-}
mkdir -p "$R/var/lib/cloud/instances/i-1/sem" "$R/var/lib/cloud/seed/nocloud" "$R/var/lib/cloud/data" \
	"$R/var/lib/cloud/scripts/per-boot" "$R/var/log" "$R/etc/cloud/clean.d"
echo "instance-id: i-1" >"$R/var/lib/cloud/seed/nocloud/meta-data"
echo "i-1" >"$R/var/lib/cloud/data/instance-id"
echo "x" >"$R/var/lib/cloud/instances/i-1/sem/config_ntp"
ln -sfn /var/lib/cloud/instances/i-1 "$R/var/lib/cloud/instance"
touch "$R/var/lib/cloud/.lock"
for f in cloud-init.log cloud-init.log.1 cloud-init-output.log cloud-init-output.log.2.gz syslog; do
	echo log >"$R/var/log/$f"
done
printf '#!/bin/sh\necho clean.d ran\n' >"$R/etc/cloud/clean.d/10-ok"
chmod +x "$R/etc/cloud/clean.d/10-ok"
if [ -n "${CASE_FAIL:-}" ]; then
	printf '#!/bin/sh\nexit 3\n' >"$R/etc/cloud/clean.d/20-fail"
	chmod +x "$R/etc/cloud/clean.d/20-fail"
fi
# cloud-init ships this in 05_logging.cfg; cloudroot always writes the output log.
mkdir -p "$R/etc/cloud/cloud.cfg.d"
echo "output: {all: '| tee -a /var/log/cloud-init-output.log'}" >"$R/etc/cloud/cloud.cfg.d/05_logging.cfg"

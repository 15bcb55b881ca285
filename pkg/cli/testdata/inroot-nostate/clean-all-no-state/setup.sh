# No state at all: no /var/lib/cloud (the harness's tmpfs goes), /run is
# an empty tmpfs, /var/log an empty one (no logs).
umount $R/var/lib/cloud
rmdir $R/var/lib/cloud

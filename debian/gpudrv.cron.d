# /etc/cron.d/gpudrv: an example, off: every line is a comment.  The systemd
# timer gpudrv-audit.timer does the same (README.Debian); use one, not both.
# The audit, hourly, for node_exporter's textfile collector (Debian's
# prometheus-node-exporter reads /var/lib/prometheus/node-exporter); exit 1
# (a missing image) and 2 (could not tell) are in the textfile, to alert on.
# Make the kubeconfig first, with an admin's: drv-kubeconfig.sh auditor /etc/gpudrv/kubeconfig
#
#17 * * * * root KUBECONFIG=/etc/gpudrv/kubeconfig /usr/bin/drv-audit.sh -p /var/lib/prometheus/node-exporter/gpudrv.prom >/dev/null

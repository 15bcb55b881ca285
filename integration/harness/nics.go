package harness

import "fmt"

// MaxExtraNICs bounds BootOptions.ExtraNICs: NICMAC(6) would be the first
// NIC's address.
const MaxExtraNICs = 5

// NICMAC is the MAC address of NIC i of a VM booted with ExtraNICs > 0:
// 52:54:00:12:34:56 (QEMU's own default) for the first one (i = 0),
// 52:54:00:12:34:5<i> for the extra ones (i = 1..MaxExtraNICs).
func NICMAC(i int) string {
	if i == 0 {
		return "52:54:00:12:34:56"
	}
	return fmt.Sprintf("52:54:00:12:34:5%d", i)
}

// nicArgs are the -netdev/-device options of the extra NICs (n1, n2...),
// each on its own restricted user network, and the first NIC's explicit
// MAC option (empty without extra NICs, keeping QEMU's default argv).
func nicArgs(extra int) (firstMAC string, args []string, err error) {
	if extra < 0 || extra > MaxExtraNICs {
		return "", nil, fmt.Errorf("boot options: ExtraNICs = %d, want 0..%d", extra, MaxExtraNICs)
	}
	if extra == 0 {
		return "", nil, nil
	}
	for i := 1; i <= extra; i++ {
		args = append(args,
			"-netdev", fmt.Sprintf("user,id=n%d,restrict=on", i),
			"-device", fmt.Sprintf("virtio-net-pci,netdev=n%d,mac=%s", i, NICMAC(i)))
	}
	return ",mac=" + NICMAC(0), args, nil
}

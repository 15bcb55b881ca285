package harness

import "testing"

func TestAppendLinuxArgs(t *testing.T) {
	for _, tc := range []struct {
		name, cfg, want string
		n               int
	}{
		{
			name: "the image's first menu",
			cfg:  "menuentry 'Debian GNU/Linux' {\n\tlinux /boot/vmlinuz-6.1 root=LABEL=cloudimg-rootfs ro console=ttyS0\n\tinitrd /boot/initrd.img-6.1\n}\n",
			want: "menuentry 'Debian GNU/Linux' {\n\tlinux /boot/vmlinuz-6.1 root=LABEL=cloudimg-rootfs ro console=ttyS0 a=1 b\n\tinitrd /boot/initrd.img-6.1\n}\n",
			n:    1,
		},
		{
			name: "update-grub's entries, trailing blanks, no final newline",
			cfg:  "\tlinux\t/boot/vmlinuz-A root=UUID=x ro  \n\techo 'Loading Linux ...'\n\t\tlinux16 /boot/vmlinuz-B ro",
			want: "\tlinux\t/boot/vmlinuz-A root=UUID=x ro a=1 b\n\techo 'Loading Linux ...'\n\t\tlinux16 /boot/vmlinuz-B ro a=1 b",
			n:    2,
		},
		{
			name: "a word containing linux is not a command",
			cfg:  "# linux is loaded below\nset linux_gfx_mode=keep\nlinux\n",
			want: "# linux is loaded below\nset linux_gfx_mode=keep\nlinux\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := appendLinuxArgs(tc.cfg, []string{"a=1", "b"})
			if got != tc.want || n != tc.n {
				t.Errorf("appendLinuxArgs = %q, %d; want %q, %d", got, n, tc.want, tc.n)
			}
		})
	}
}

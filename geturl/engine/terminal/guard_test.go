package terminal

import (
	"strings"
	"testing"
)

// These tests only ever call Catastrophic: nothing here runs a command.

func TestCatastrophicRefused(t *testing.T) {
	for _, tc := range []struct{ cmd, rule string }{
		{"rm -rf /", RuleRmRoot},
		{"rm -fr /", RuleRmRoot},
		{"rm -rf /*", RuleRmRoot},
		{"rm -rf ~", RuleRmRoot},
		{"rm -rf ~/", RuleRmRoot},
		{"rm -rf ~/*", RuleRmRoot},
		{"rm -rf ~alice", RuleRmRoot},
		{"rm -rf --no-preserve-root /", RuleNoPreserveRoot},
		{"rm --no-preserve-root -r /x", RuleNoPreserveRoot},
		{"rm -r -f /", RuleRmRoot},
		{"rm -Rf /", RuleRmRoot},
		{"rm --recursive --force /", RuleRmRoot},
		{"rm / -rf", RuleRmRoot},
		{"rm -rf -- /", RuleRmRoot},
		{"rm -rf /.", RuleRmRoot},
		{"rm -rf //", RuleRmRoot},
		{"rm -rf /..", RuleRmRoot},
		{"rm -rf /.*", RuleRmRoot},
		{"rm -rf /usr", RuleRmRoot},
		{"rm -rf /etc/", RuleRmRoot},
		{"rm -rf /usr/*", RuleRmRoot},
		{"rm -rf /home/alice", RuleRmRoot},
		{"rm -rf /Users/alice/", RuleRmRoot},
		{`rm -rf "/"`, RuleRmRoot},
		{`rm -rf '/'`, RuleRmRoot},
		{`rm -rf /\*`, RuleRmRoot},
		{`r\m -rf /`, RuleRmRoot},
		{`"rm" -rf /`, RuleRmRoot},
		{"rm -rf $HOME", RuleRmRoot},
		{`rm -rf "${HOME}"`, RuleRmRoot},
		{`rm -rf "$HOME/"`, RuleRmRoot},
		{"rm -rf $BUILD_DIR/", RuleRmRoot},
		{`rm -rf "$BUILD_DIR"/*`, RuleRmRoot},
		{"rm -rf ${OUT}/", RuleRmRoot},
		{"rm -rf $(pwd)/", RuleRmRoot},
		{"/bin/rm -rf /", RuleRmRoot},
		{"sudo rm -rf /", RuleRmRoot},
		{"sudo -u root rm -rf /", RuleRmRoot},
		{"doas rm -rf /", RuleRmRoot},
		{"env rm -rf /", RuleRmRoot},
		{"env -i PATH=/bin rm -rf /", RuleRmRoot},
		{"FOO=1 BAR=2 rm -rf /", RuleRmRoot},
		{"nohup rm -rf / &", RuleRmRoot},
		{"timeout 5 rm -rf /", RuleRmRoot},
		{"timeout -s KILL 5 rm -rf /", RuleRmRoot},
		{"nice -n 10 rm -rf /", RuleRmRoot},
		{"busybox rm -rf /", RuleRmRoot},
		{"exec rm -rf /", RuleRmRoot},
		{"echo x | xargs rm -rf /", RuleRmRoot},
		{"echo hi; rm -rf /", RuleRmRoot},
		{"echo hi\nrm -rf /", RuleRmRoot},
		{"true && rm -rf /", RuleRmRoot},
		{"false || rm -rf /", RuleRmRoot},
		{"(rm -rf /)", RuleRmRoot},
		{"{ rm -rf /; }", RuleRmRoot},
		{"if true; then rm -rf /; fi", RuleRmRoot},
		{"while :; do rm -rf /; done", RuleRmRoot},
		{"! rm -rf /", RuleRmRoot},
		{"echo $(rm -rf /)", RuleRmRoot},
		{`echo "$(rm -rf /)"`, RuleRmRoot},
		{"echo `rm -rf /`", RuleRmRoot},
		{"cat <(rm -rf /)", RuleRmRoot},
		{`sh -c "rm -rf /"`, RuleRmRoot},
		{`bash -lc 'rm -rf /'`, RuleRmRoot},
		{`bash -o pipefail -c 'rm -rf /'`, RuleRmRoot},
		{`sh -c 'sh -c "rm -rf /"'`, RuleRmRoot},
		{`eval "rm -rf /"`, RuleRmRoot},
		{`su -c "rm -rf /" root`, RuleRmRoot},
		{`env -S "rm -rf /"`, RuleRmRoot},
		{`echo 'rm -rf /' | sh`, RuleRmRoot},
		{`printf 'rm -rf /\n' | bash`, RuleRmRoot},
		{"sh <<EOF\nrm -rf /\nEOF", RuleRmRoot},
		{"bash <<-'EOF'\n\trm -rf /\n\tEOF\necho done", RuleRmRoot},
		{"cat <<EOF | sh\nrm -rf /\nEOF", RuleRmRoot},
		{`bash <<< 'rm -rf /'`, RuleRmRoot},
		{`$'rm' -rf $'\x2f'`, RuleRmRoot},

		{"mkfs /dev/sda1", RuleMkfs},
		{"mkfs.ext4 /dev/sdb", RuleMkfs},
		{"sudo mkfs.xfs -f /dev/nvme0n1p1", RuleMkfs},
		{"mke2fs /dev/sdb1", RuleMkfs},
		{"wipefs -a /dev/sda", RuleMkfs},
		{"blkdiscard /dev/nvme0n1", RuleMkfs},

		{"dd if=/dev/zero of=/dev/sda", RuleDiskWrite},
		{"dd if=x.img of=/dev/nvme0n1 bs=4M", RuleDiskWrite},
		{"dd if=/dev/urandom of=/dev/mmcblk0", RuleDiskWrite},
		{"dd of=/dev/disk/by-id/usb-x if=a", RuleDiskWrite},
		{"echo x > /dev/sda", RuleDiskWrite},
		{"cat img >>/dev/sdb", RuleDiskWrite},
		{"cat img 1>/dev/vda", RuleDiskWrite},
		{"cat img &> /dev/xvda", RuleDiskWrite},
		{"cat img >| /dev/hda", RuleDiskWrite},
		{"exec 3<>/dev/sda", RuleDiskWrite},
		{"cat img | tee /dev/sda >/dev/null", RuleDiskWrite},
		{"cp disk.img /dev/sdc", RuleDiskWrite},
		{"shred -n 1 /dev/sda", RuleDiskWrite},
		{"echo 0 > /dev/mem", RuleDiskWrite},
		{"cat x > /dev/mapper/root", RuleDiskWrite},

		{"shutdown -h now", RulePower},
		{"shutdown", RulePower},
		{"sudo reboot", RulePower},
		{"halt", RulePower},
		{"poweroff -f", RulePower},
		{"/sbin/shutdown -r +1", RulePower},
		{"init 0", RulePower},
		{"init 6", RulePower},
		{"telinit 6", RulePower},
		{"systemctl poweroff", RulePower},
		{"systemctl --force reboot", RulePower},
		{"sleep 1; systemctl halt", RulePower},
		{"systemctl isolate poweroff.target", RulePower},
		{"systemctl start reboot.target", RulePower},
		{"systemctl isolate rescue", RulePower},
		{"loginctl poweroff", RulePower},
		{"systemctl suspend", RulePower},
		{"kexec -e", RulePower},

		{":(){ :|:& };:", RuleForkBomb},
		{":(){ :|: & };:", RuleForkBomb},
		{"bomb() { bomb | bomb & }; bomb", RuleForkBomb},
		{"f(){ f&f; }; f", RuleForkBomb},
		{"function b { b | b & }; b", RuleForkBomb},
		{"function b() { b|b& }; b", RuleForkBomb},
		{"x(){\n  x | x &\n}\nx", RuleForkBomb},

		{"chmod -R 777 /", RuleRecursiveChmod},
		{"chmod --recursive 777 /", RuleRecursiveChmod},
		{"sudo chmod -R a+rwx /*", RuleRecursiveChmod},
		{"chown -R nobody /", RuleRecursiveChmod},
		{"chown -R me:me /usr", RuleRecursiveChmod},
		{"chgrp -hR staff /", RuleRecursiveChmod},
		{"chmod -R 000 ~", RuleRecursiveChmod},

		{"mv / /tmp/x", RuleMoveRoot},
		{"mv ~ /dev/null", RuleMoveRoot},
		{"mv /etc /etc.bak", RuleMoveRoot},

		{"find / -delete", RuleFindDeleteRoot},
		{"find / -name '*.log' -exec rm -f {} +", RuleFindDeleteRoot},
		{"find -L ~ -type f -delete", RuleFindDeleteRoot},

		{"kill -9 -1", RuleKillAll},
		{"kill -KILL -1", RuleKillAll},
		{"kill -s TERM -1", RuleKillAll},
		{"kill -- -1", RuleKillAll},
	} {
		r, ok := Catastrophic(tc.cmd)
		if !ok || r.Rule != tc.rule {
			t.Errorf("Catastrophic(%q) = %v, %v; want rule %s", tc.cmd, r, ok, tc.rule)
		}
		if ok && r.Reason == "" {
			t.Errorf("Catastrophic(%q): empty reason", tc.cmd)
		}
	}
}

func TestCatastrophicAllowed(t *testing.T) {
	for _, cmd := range []string{
		"",
		"ls -la",
		"npm run dev",
		"go test ./...",
		"rm -rf node_modules",
		"rm -rf ./dist /tmp/build",
		"rm -rf .",
		"rm -rf *",
		"rm -rf ..",
		"rm -rf /tmp",
		"rm -rf /tmp/*",
		"rm -rf /tmp/x",
		"rm -rf /usr/local/lib/foo",
		"rm -rf ~/proj/build",
		"rm -rf $HOME/.cache/go-build",
		`rm -rf "$TARGET"`,
		"rm -rf ${DIR:?}/",
		"rm -rf ${DIR:-build}/",
		"rm -rf $OUT/dist",
		"rm -f /",
		"rm /",
		`echo rm -rf /`,
		`echo "rm -rf /"`,
		`echo 'rm -rf /' > notes.txt`,
		`git commit -m "never rm -rf / again"`,
		`grep -rn "shutdown" .`,
		"grep -r mkfs docs",
		"man reboot",
		"which halt poweroff",
		"command -v shutdown",
		"./shutdown.sh",
		"git init",
		"npm run reboot-server",
		"cat /dev/sda | head -c 512 | xxd",
		"ls -l /dev/sda",
		"dd if=/dev/sda of=disk.img bs=1M count=1",
		"dd if=/dev/zero of=file bs=1M count=1",
		"echo hi > /dev/null",
		"make 2>/dev/null >/dev/stderr",
		"cmd 2>&1 | tee build.log",
		"cat x > /dev/tty",
		"cp /dev/sda disk.img",
		"chmod -R 755 ./build",
		"chmod 777 /tmp/x",
		"chown -R me:me .",
		"chmod -r secret.txt",
		"kill -9 1234",
		"kill -1 1234",
		"kill -1",
		"kill -l",
		"find . -delete",
		"find / -name x",
		"find /tmp -delete",
		"systemctl status nginx",
		"systemctl --user restart app",
		"systemctl start nginx.service",
		"systemctl isolate",
		"loginctl list-sessions",
		"init.sh 0",
		"f() { echo hi; }; f",
		"log() { echo \"$@\" >> log.txt; }; log start",
		":",
		"python -c \"print('rm -rf /')\"",
		"sh ./build.sh",
		"bash script.sh /",
		"sh -c 'rm -rf build'",
		"cat <<EOF\nrm -rf /\nshutdown now\nEOF",
		"# rm -rf /",
		"echo done # reboot",
		"mv build /tmp/old-build",
		"docker run --rm -v $PWD:/src img",
		"cat <<EOF > script.sh\nrm -rf /\nEOF",
		"mkdir -p ~/x && cd ~/x",
		"echo $((1+2))",
		"x=/; echo $x",
		"'unterminated",
		"echo \"unterminated",
		"$(",
		"`",
	} {
		if r, ok := Catastrophic(cmd); ok {
			t.Errorf("Catastrophic(%q) = %v; want allowed", cmd, r)
		}
	}
}

// FuzzCatastrophic: the detector never panics, is deterministic, and a
// refusal always names a rule and a reason.
func FuzzCatastrophic(f *testing.F) {
	for _, s := range []string{
		"rm -rf /", "echo 'rm -rf /' | sh", ":(){ :|:& };:", "sh <<EOF\nrm -rf /\nEOF",
		"$'\\x2f'", "${HOME:-/}", "dd of=/dev/sda", "echo $(($((1))))", "`a\\`b`",
		"a <<- X\n\tX\n", "env -S", "sudo -u", "timeout", "kill -s", "find -D", "x(){",
		"function", "((", "$((", "<(", ">(x", "&>", "2>&-", "${", "~", "\\", "'", "\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r1, ok1 := Catastrophic(s)
		r2, ok2 := Catastrophic(s)
		if r1 != r2 || ok1 != ok2 {
			t.Fatalf("not deterministic: %v %v", r1, r2)
		}
		if ok1 && (r1.Rule == "" || r1.Reason == "") {
			t.Fatalf("refusal without rule or reason: %v", r1)
		}
		// Prefixing a harmless command never hides a refusal.
		if ok1 && !strings.ContainsAny(s, "'\"\\`#") {
			if _, ok := Catastrophic("true; " + s); !ok {
				t.Fatalf("%q refused but not after a prefix", s)
			}
		}
	})
}

package terminal

import "strings"

// sysrqTrigger is the kernel's magic SysRq file: writing "b" or "o" to it
// reboots or powers off the machine at once, with no shutdown.
const sysrqTrigger = "/proc/sysrq-trigger"

// changeDir follows a cd or pushd for the guard, so that "cd / && rm -rf *"
// is judged as "rm -rf /*". dir is "" while the shell is still in its
// starting directory (the project: relative paths there are never
// refused); a cd the guard cannot follow (cd -, a relative cd from the
// start other than a climb out of start) leaves it or sets it back to "".
func changeDir(dir, start string, args []string) string {
	ops := operands(args)
	if len(ops) == 0 {
		return "~" // cd alone goes home
	}
	t := ops[0]
	switch {
	case t == "-":
		return ""
	case absoluteWord(t):
		return t
	case dir != "":
		return dir + "/" + t
	case climbs(t) && start != "":
		return start + "/" + t
	}
	return ""
}

// climbs reports whether a relative path starts by leaving its directory.
func climbs(w string) bool {
	return w == ".." || strings.HasPrefix(w, "../")
}

// resolveArgs rewrites the relative operands of a command run after a cd
// the guard followed into paths under that directory, leaving options and
// the first skip operands alone. In the starting directory only operands
// that climb out of it (../…) are rewritten, against start.
func resolveArgs(dir, start string, args []string, skip int) []string {
	if dir == "" && start == "" {
		return args
	}
	out := make([]string, len(args))
	opts := true
	for i, a := range args {
		out[i] = a
		if opts && a == "--" {
			opts = false
			continue
		}
		if opts && len(a) > 1 && a[0] == '-' {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		switch {
		case absoluteWord(a):
		case dir != "":
			out[i] = dir + "/" + a
		case climbs(a):
			out[i] = start + "/" + a
		}
	}
	return out
}

// absoluteWord reports whether a word names a path that does not depend on
// the current directory: /…, ~…, or one that starts with an expansion
// ($HOME, ${X}/…), which rootish expands on its own.
func absoluteWord(w string) bool {
	return strings.HasPrefix(w, "/") || strings.HasPrefix(w, "~") || strings.HasPrefix(w, "$")
}

// Package childenv is the environment a child of the hub gets: the hub's
// own, minus every variable that looks like a credential.
//
// The hub holds secrets in its environment (tokens for the services it
// talks to, the user's GITHUB_TOKEN, cloud keys) and makes itself
// undumpable so that no other process of its user can read them. A child
// is dumpable again after execve, and any process of the same user can
// read its /proc/<pid>/environ — a command the geturl terminal runs
// included — so a child that does not need the secrets must not be given
// them: the terminal's shells, cloudflared, rg, the tool version probes
// and the browser opener all start from Strip (or Environ).
//
// A variable is a secret (IsSecret) when its name matches one of
// SecretNamePatterns (or the caller's extra patterns), or its value,
// anywhere in it, looks like a credential: a URL with a password in its
// userinfo, a credential as key=value or as a JSON member, a webhook URL,
// a well-known token format, an Authorization value or private key
// material. The rules are deliberately broad (a harmless variable lost
// costs little, a token read by another process costs a credential), and
// every value rule is a linear scan of at most 64 KiB: a longer value is
// taken for a secret unread.
//
// What a child needs to work passes: PATH, HOME, USER, SHELL, LANG and
// LC_*, TERM, TMPDIR, XDG_*, DISPLAY, WAYLAND_DISPLAY, XAUTHORITY,
// DBUS_SESSION_BUS_ADDRESS, SSH_AUTH_SOCK, proxies without a password, and
// anything else that is not a secret. A caller that must also keep a
// child's own settings out (cloudflared's TUNNEL_*, rg's RIPGREP_*) removes
// them itself.
package childenv

package terminal

import (
	"regexp"
	"strings"
)

// SecretNamePatterns are the environment variable names stripped from every
// terminal child, matched case-insensitively; "*" matches any run of
// characters (including none). They are deliberately broad: a harmless
// variable lost costs little, a token printed by `env` into an agent's
// transcript costs a credential.
var SecretNamePatterns = []string{
	"*TOKEN*",       // GITHUB_TOKEN, GH_TOKEN, NPM_TOKEN, HF_TOKEN, *_AUTH_TOKEN
	"*SECRET*",      // AWS_SECRET_ACCESS_KEY, CLIENT_SECRET, SECRET_KEY_BASE
	"*PASSWORD*",    // PGPASSWORD, MYSQL_ROOT_PASSWORD
	"*PASSWD*",      //
	"*PASSPHRASE*",  //
	"*_PASS",        // SMTP_PASS, DB_PASS
	"SSHPASS",       // sshpass -e
	"*_PAT",         // GH_PAT, ADO_PAT (personal access tokens)
	"*_PAT_*",       //
	"*_PWD",         // MYSQL_PWD (PWD and OLDPWD are handled apart)
	"*CREDENTIAL*",  // GOOGLE_APPLICATION_CREDENTIALS, *_CREDENTIALS
	"*API_KEY*",     // OPENAI_API_KEY, ANTHROPIC_API_KEY
	"*APIKEY*",      //
	"*_KEY",         // STRIPE_KEY, *_PRIVATE_KEY, *_ACCESS_KEY
	"*_KEYS",        //
	"*PRIVATE_KEY*", //
	"*ACCESS_KEY*",  // AWS_ACCESS_KEY_ID
	"*_AUTH",        // NPM_CONFIG__AUTH
	"*_AUTH_*",      // DOCKER_AUTH_CONFIG
	"AUTH_*",        // AUTH_HEADER
	"AUTH",          //
	"*JWT*",         // CI_JOB_JWT, JWT (a bearer token by another name)
	"OP_SESSION_*",  // 1Password CLI session tokens
	"*COOKIE*",      //
	"*_DSN",         // SENTRY_DSN
	"*WEBHOOK*",     // SLACK_WEBHOOK_URL
	"AWS_*",         // every AWS setting, as the brief asks
	"GETMCP_OPENCODE_*",
	"OPENCODE_SERVER_*",
}

// keptNames are never stripped although a pattern matches them: they are
// not secrets (SSH_AUTH_SOCK is a socket path that git over ssh needs).
var keptNames = map[string]bool{
	"SSH_AUTH_SOCK":          true,
	"TOKENIZERS_PARALLELISM": true,
}

// secretValueRe matches values that carry a credential whatever the name: a
// URL with a password in it (postgres://u:p@h, http://u:p@proxy), the
// prefixes of well-known token formats, an Authorization value, and private
// key material (a PEM block, or a service-account JSON's "private_key").
// Passwords also travel without a URL scheme: a Go MySQL DSN
// (user:pw@tcp(host)/db) and ADO.NET or Azure connection strings
// (…;Password=…;, AccountKey=, SharedAccessKey=).
var secretValueRe = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@|` +
	`^[^\s:/@]+:[^\s@]+@(tcp|unix)\(|` +
	`(?i:(^|;)\s*(password|pwd|accountkey|sharedaccesskey)\s*=)|` +
	`^(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abpr]-|sk-ant-|sk-proj-|AKIA[0-9A-Z]{12}|pypi-AgE|[sr]k_live_)|` +
	`^(eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]*\.|npm_[A-Za-z0-9]{36}|hf_[A-Za-z]{30}|AIza[0-9A-Za-z_-]{35}|sk-[A-Za-z0-9_-]{20})|` +
	`^(?i:bearer|basic|token)\s+\S|-----BEGIN [A-Z ]*PRIVATE KEY-----|"private_key"\s*:`)

// IsSecret reports whether an environment variable is stripped from
// terminal children: its name matches SecretNamePatterns or extra (and is
// not SSH_AUTH_SOCK or TOKENIZERS_PARALLELISM), or its value looks like a
// credential (a URL with user:password@, or a GitHub/GitLab/Slack/OpenAI/
// Anthropic/AWS token prefix).
func IsSecret(name, value string, extra ...string) bool {
	up := strings.ToUpper(name)
	if keptNames[up] {
		return false
	}
	for _, p := range SecretNamePatterns {
		if globMatch(p, up) {
			return true
		}
	}
	for _, p := range extra {
		if globMatch(strings.ToUpper(p), up) {
			return true
		}
	}
	return secretValueRe.MatchString(value)
}

// childEnv is the environment of a terminal child: base without secrets,
// without PWD and OLDPWD (they name the hub's own directory, a host path),
// and with PWD set to the child's working directory so `pwd` agrees with
// the shell.
func childEnv(base []string, extra []string, dir string) []string {
	out := make([]string, 0, len(base)+1)
	for _, kv := range base {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if name == "PWD" || name == "OLDPWD" || IsSecret(name, value, extra...) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PWD="+dir)
}

// globMatch matches s against a pattern whose only metacharacter is *.
func globMatch(pattern, s string) bool {
	px, sx := 0, 0
	star, mark := -1, 0
	for sx < len(s) {
		switch {
		case px < len(pattern) && pattern[px] == '*':
			star, mark = px, sx
			px++
		case px < len(pattern) && pattern[px] == s[sx]:
			px++
			sx++
		case star >= 0:
			px = star + 1
			mark++
			sx = mark
		default:
			return false
		}
	}
	for px < len(pattern) && pattern[px] == '*' {
		px++
	}
	return px == len(pattern)
}

package childenv

import "strings"

// The value scanners behind secretValue. Each reads the value once (a
// bounded look back or ahead at each candidate byte), whatever it holds.

// credentialKeys are the words that make a key name a credential whatever
// comes before them (dbpassword=, client_secret=, X-Amz-Signature=,
// "apiKey":); credentialWords only as the whole key or after a separator
// (pwd=, db_pass=, sig=, key=, but not bypass= or monkey=).
var (
	credentialKeys  = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "api-key", "accountkey", "sharedaccesskey", "signature"}
	credentialWords = []string{"pwd", "pass", "sig", "key"}
	// jsonCredentialKeys, for JSON keys, whatever comes before them.
	jsonCredentialKeys = []string{"password", "passwd", "secret", "token", "apikey", "api_key", "privatekey", "private_key", "accesskey", "access_key"}
)

// maxKey bounds the key read back from an "=" or a JSON ":".
const maxKey = 256

// isKeyByte reports whether c may be part of a key: letters, digits, _ . -.
func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// isSpace is a regular expression's \s: space, tab, newline, CR, FF.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// credentialKey reports whether v holds a credential as key=value — in a
// connection string (…;Password=…), a query (?password=, &access_token=),
// an option list (-Dx.trustStorePassword=, host=h password=p) — whose key
// starts v or follows one of ; & ? , or a space, with spaces allowed
// around the "="; or as a JSON member with a non-empty string value
// ("password": "…").
func credentialKey(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '=':
			j := i
			for j > 0 && isSpace(v[j-1]) {
				j--
			}
			k := j
			for k > 0 && j-k < maxKey && isKeyByte(v[k-1]) {
				k--
			}
			if k == j || k > 0 && !strings.ContainsRune(";&?,", rune(v[k-1])) && !isSpace(v[k-1]) {
				continue
			}
			if credentialName(v[k:j]) {
				return true
			}
		case ':':
			if jsonCredential(v, i) {
				return true
			}
		}
	}
	return false
}

// credentialName reports whether key names a credential (credentialKeys,
// credentialWords).
func credentialName(key string) bool {
	for _, w := range credentialKeys {
		if hasSuffixFold(key, w) {
			return true
		}
	}
	for _, w := range credentialWords {
		if hasSuffixFold(key, w) && (len(key) == len(w) || strings.ContainsRune("_.-", rune(key[len(key)-len(w)-1]))) {
			return true
		}
	}
	return false
}

// jsonCredential reports whether the ":" at i ends a JSON key that names a
// credential and starts a non-empty string: "key" : "x.
func jsonCredential(v string, i int) bool {
	j := i
	for j > 0 && isSpace(v[j-1]) {
		j--
	}
	if j == 0 || v[j-1] != '"' {
		return false
	}
	end := j - 1
	k := end
	for k > 0 && end-k < maxKey && isKeyByte(v[k-1]) {
		k--
	}
	if k == 0 || v[k-1] != '"' {
		return false
	}
	a := i + 1
	for a < len(v) && isSpace(v[a]) {
		a++
	}
	if a+1 >= len(v) || v[a] != '"' || v[a+1] == '"' {
		return false
	}
	key := v[k:end]
	for _, w := range jsonCredentialKeys {
		if hasSuffixFold(key, w) {
			return true
		}
	}
	return false
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// tokenPrefixes are token formats distinctive enough to be looked for
// anywhere in a value (a token in a URL, a header, a list): after a byte
// that is not a letter or digit, with at least 8 token bytes after them.
var tokenPrefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-",
	"xoxa-", "xoxb-", "xoxp-", "xoxr-", "sk-ant-", "sk-proj-", "sk_live_", "rk_live_", "pypi-AgE"}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// tokenInside reports whether v holds a token with one of tokenPrefixes,
// or an AWS access key id (AKIA and 16 upper-case letters or digits, a
// word of its own), anywhere.
func tokenInside(v string) bool {
	for _, p := range tokenPrefixes {
		for off := 0; ; {
			i := strings.Index(v[off:], p)
			if i < 0 {
				break
			}
			i += off
			off = i + 1
			if i > 0 && isAlnum(v[i-1]) {
				continue
			}
			n := 0
			for t := i + len(p); t < len(v) && n < 8 && (isAlnum(v[t]) || v[t] == '_' || v[t] == '-'); t++ {
				n++
			}
			if n == 8 {
				return true
			}
		}
	}
	for off := 0; ; {
		i := strings.Index(v[off:], "AKIA")
		if i < 0 {
			return false
		}
		i += off
		off = i + 1
		if i > 0 && isAlnum(v[i-1]) || i+20 > len(v) || i+20 < len(v) && isAlnum(v[i+20]) {
			continue
		}
		ok := true
		for _, c := range []byte(v[i+4 : i+20]) {
			ok = ok && ('A' <= c && c <= 'Z' || '0' <= c && c <= '9')
		}
		if ok {
			return true
		}
	}
}

// authInside reports whether v holds an Authorization header with a value
// ("Authorization: x") or a bearer token after a space ("… Bearer
// abcdefgh"), in any case.
func authInside(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case 'a', 'A':
			const h = "authorization:"
			if len(v)-i >= len(h) && strings.EqualFold(v[i:i+len(h)], h) {
				j := i + len(h)
				for j < len(v) && isSpace(v[j]) {
					j++
				}
				if j < len(v) {
					return true
				}
			}
		case 'b', 'B':
			const b = "bearer"
			if i == 0 || !isSpace(v[i-1]) || len(v)-i < len(b) || !strings.EqualFold(v[i:i+len(b)], b) {
				continue
			}
			j := i + len(b)
			if j >= len(v) || !isSpace(v[j]) {
				continue
			}
			for j < len(v) && isSpace(v[j]) {
				j++
			}
			n := 0
			for ; j < len(v) && n < 8 && (isAlnum(v[j]) || strings.IndexByte("._~+/=-", v[j]) >= 0); j++ {
				n++
			}
			if n == 8 {
				return true
			}
		}
	}
	return false
}

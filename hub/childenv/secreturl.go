package childenv

import "strings"

// maxURLs bounds how many "://" secretURL follows in one value; a value
// with more is taken for a secret unread.
const maxURLs = 64

// secretURL reports whether v holds a URL that carries a credential: a
// password in its userinfo (postgres://u:p@h, mongodb+srv://u:p@cluster,
// redis://:p@h, amqp://u:p@h, a proxy's http://u:p@h), or the path of a
// webhook, whose secret is the URL itself (hooks.slack.com/services/…,
// discord.com/api/webhooks/…, outlook.office.com/webhook…, or a
// "hooks"/"webhook" segment followed by a long one, as self-hosted chat
// servers make them). Each "://" is read as a URL's start, whatever
// precedes it; the URL ends at whitespace, a quote or a list separator.
// Credentials in a query (?password=, &token=) are credentialKey's.
func secretURL(v string) bool {
	rest := v
	for range maxURLs {
		i := strings.Index(rest, "://")
		if i < 0 {
			return false
		}
		rest = rest[i+3:]
		u := rest
		if j := strings.IndexAny(u, " \t\r\n\"'<>`,;|"); j >= 0 {
			u = u[:j]
		}
		authority, path := u, ""
		if j := strings.IndexAny(u, "/?#"); j >= 0 {
			authority, path = u[:j], u[j:]
		}
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			if _, pass, ok := strings.Cut(authority[:at], ":"); ok && pass != "" {
				return true
			}
			authority = authority[at+1:]
		}
		if webhookURL(hostOf(authority), path) {
			return true
		}
	}
	return true
}

// hostOf is the lower-cased host of an authority without userinfo: the
// port and a final dot dropped, an IPv6 literal's brackets kept.
func hostOf(authority string) string {
	h := authority
	if strings.HasPrefix(h, "[") {
		if j := strings.IndexByte(h, ']'); j >= 0 {
			h = h[:j+1]
		}
	} else if j := strings.IndexByte(h, ':'); j >= 0 {
		h = h[:j]
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// webhooks are the hosts (a leading "." matches any subdomain) whose
// URLs are secrets when their path contains part.
var webhooks = []struct{ host, part string }{
	{"hooks.slack.com", "/services/"},
	{"hooks.slack.com", "/workflows/"},
	{"hooks.slack.com", "/triggers/"},
	{"discord.com", "/webhooks/"},
	{".discord.com", "/webhooks/"}, // ptb., canary.
	{"discordapp.com", "/webhooks/"},
	{"outlook.office.com", "/webhook"},
	{"outlook.office365.com", "/webhook"},
	{".webhook.office.com", "/webhook"},
	{".logic.azure.com", "/workflows/"},
	{"hooks.zapier.com", "/hooks/"},
	{"chat.googleapis.com", "/spaces/"},
	{"api.telegram.org", "/bot"},
	{"maker.ifttt.com", "/trigger/"},
}

// webhookURL reports whether host and path are a webhook's.
func webhookURL(host, path string) bool {
	for _, w := range webhooks {
		if (host == w.host || strings.HasPrefix(w.host, ".") && strings.HasSuffix(host, w.host)) &&
			strings.Contains(path, w.part) {
			return true
		}
	}
	// Anywhere else: /hooks/<id>, /webhook/<id>, … with an id of 16
	// characters or more (a local /webhooks/stripe endpoint is no secret).
	if j := strings.IndexAny(path, "?#"); j >= 0 {
		path = path[:j]
	}
	segs := strings.Split(path, "/")
	for i := 0; i+1 < len(segs); i++ {
		switch strings.ToLower(segs[i]) {
		case "hooks", "webhook", "webhooks", "webhookb2":
			if len(segs[i+1]) >= 16 {
				return true
			}
		}
	}
	return false
}

// Package transport is the URL grammar of geturl: everything an agent can
// say lives in one GET request-target, so this package owns how that target
// is cut up and decoded, how strictly its parameters are bound, how a
// refusal is reported, and how exact URLs are built for the agent to fetch
// back.
//
// A request-target (at most MaxTarget bytes) is split into a path and a
// query. The query's first raw= parameter starts the raw tail: everything
// after it is content, never parameters (at most MaxRaw bytes, before and
// after decoding). Every value, raw tail included, is decoded the same way,
// in this order:
//
//  1. an unescaped + is a space (URL readers rewrite spaces to +);
//  2. valid %XX escapes are decoded, as long as each run of them decodes to
//     valid UTF-8; a stray % or an escape that would make invalid UTF-8 is
//     kept literally, so no input can fail to decode;
//  3. the ~ grammar: ~n ~r ~t ~h(#) ~p(%) ~q(+) ~s(space) ~a(&) ~~(~),
//     ~uXXXX (UTF-16 code unit; a high surrogate followed by ~u and a low
//     surrogate is one code point) and ~u{X…} (a code point up to 10FFFF).
//     Anything else after ~ (bad hex, truncation, lone surrogates, out of
//     range, unknown letters) is kept verbatim.
//
// Because percent-decoding runs first, %7E is a ~ like any other (a reader
// that percent-encodes ~ does not change what the agent meant), %2B is a
// literal + (it was escaped, so step 1 never saw it), and the % that ~p
// produces is never percent-decoded again.
//
// Parameters are bound against a per-route Spec: unknown names, conflicting
// aliases, conflicting content transports, malformed values and ambiguous
// modes are refused with a structured *Error; when the request can be
// corrected deterministically (a typo of a known name, a wait clamped into
// range, an empty placeholder, a control parameter written after raw=) the
// error carries the exact repair URL, verified to bind cleanly.
//
// The compatibility form content=<base64url(JSON)> is decoded by
// DecodeContent, strictly and within MaxContentJSON, MaxContentFields and
// MaxContentValues, into the request the compact route would get
// (Content.Target), so it binds through the same Spec as every other
// spelling. Spec.Describe gives a route's contract as data, for /manifest.
//
// Encode is the inverse of the decoder for valid UTF-8: Decode(Encode(s))
// == s, and Encode's output survives the rewrites URL readers are known to
// make (%20 to +, ~ to %7E, percent-encoding of punctuation, lower-case
// hex, decoding of harmless escapes).
package transport

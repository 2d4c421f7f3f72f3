// Package frame is the /ws wire format of the aiui channel: a u32
// big-endian header length, a UTF-8 JSON envelope, and a raw payload that
// runs to the end of the WebSocket message. It also holds the payload codecs
// (JSON and raw) that formats pair with their processors.
package frame

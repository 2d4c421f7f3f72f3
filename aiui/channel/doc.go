// Package channel is the per-connection /ws state machine of the aiui
// channel: hello and format selection, threads keyed per connection,
// exactly one ack per frame in arrival order, the error taxonomy (fatal →
// reply then close; non-fatal → reply and keep going), the format registry,
// and the built-in text-concat format.
package channel

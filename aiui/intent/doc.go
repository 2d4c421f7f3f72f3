// Package intent is the intent-v1 lowering: the intent tool's event log,
// composeIntent (transcript segments, corrections, shots and ink folded into
// one turn), the V4A patch applier used by corrections, Option-C assembly
// (a prompt body with {shot_N} tokens plus a shot_N → absolute path map),
// and the transcription and correction seams (mock and OpenAI-compatible
// REST).
package intent

// Package staging is geturl's staged content store (/s and /b): content
// too large for one URL arrives as immutable chunks addressed by (blob,
// index, content) and is assembled when a mutation names the blob with
// blob=.
//
// Immutability is what makes staging replay-safe without a journal:
// sending a chunk again with the same content changes nothing (it is
// acknowledged as a duplicate), the same index with other content is
// staged_chunk_conflict, and a blob's declared count is fixed by its first
// chunk, so a later mismatch or an index outside it fails at once rather
// than at assembly. Assembly refuses missing chunks and a count that does
// not match the declared one.
//
// The store is per session generation, in memory, and bounded by the
// spec's limits: 8 KiB per chunk, 64 chunks and 160 KiB per blob, 128
// blobs and 2 MiB per session (the least recently used blobs other than
// the one being staged are evicted first), and 30 minutes of inactivity
// per blob, on an injected clock.
package staging

// Package outline is the engine behind /o: a bounded map of a source file's
// imports and named declarations with line numbers, so an agent can read
// only the ranges it needs.
//
// JavaScript and TypeScript (.js .jsx .mjs .cjs .ts .tsx .mts .cts) go
// through a hand-written scanner that understands exactly as much of the
// language as an outline needs: it skips strings, template literals (with
// nested ${} expressions), comments, regular expression literals and JSX,
// so that brace depth stays right, then reads top-level statements: static
// imports and re-exports, require() and import() with a literal module
// anywhere, functions, classes (with their methods), interfaces, type
// aliases, enums, namespaces, const/let/var (arrow functions and function
// expressions reported as functions), export default and CommonJS exports.
// It never fails: on input it does not understand it reports less.
//
// Go goes through go/parser: imports, funcs, methods with their receiver,
// types, consts and vars; a file with syntax errors is outlined as far as
// the parser got.
//
// A source larger than MaxParseBytes (256 KiB; generated code, bundles)
// is not parsed in full — go/parser's tree and the JS token table cost
// tens of bytes per byte of source. It is outlined by one streaming pass
// over its tokens instead (for Go a tokenizer that allocates nothing and
// the top-level declaration grammar; for JS/TS the same scanner and
// statement rules, keeping only one top-level statement's shallow tokens
// at a time), which finds the same declarations for well-formed source
// with memory that does not grow with the file, and marks the outline
// Scanned.
//
// Every outline is bounded (MaxSourceBytes scanned, MaxImports, MaxDecls,
// MaxNameBytes) and says when a bound cut it.
package outline

package transport

import "testing"

func BenchmarkParseBindRead(b *testing.B) {
	target := "/v0/AbCd1234/r?path=src/app.ts&path=src/sandbox.ts&path=package.json&start=1&end=200"
	b.ReportAllocs()
	for b.Loop() {
		tg, err := ParseTarget(target)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Bind(tg, readSpec, base); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRawTail(b *testing.B) {
	tail := "***%20Begin%20Patch~n***%20Update%20File:%20src/app.ts~n@@~n-const%20a%20=%201;~n+const%20a%20=%202;~n~u00E9~u{1F600}"
	b.SetBytes(int64(len(tail)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Decode(tail)
	}
}

func BenchmarkEncode(b *testing.B) {
	s := "const a = `${x} + ${y}`; // 100% #1 ~ é 😀\n"
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		_ = Encode(s)
	}
}

package outline

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubdev/hub/internal/cputime"
)

// largeTS is about 1 MiB of realistic TypeScript: classes with methods,
// functions with template literals and JSX-free bodies, imports, types.
func largeTS() []byte {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "import { dep%d, other%d } from './deps/dep%d';\n", i, i, i)
	}
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, `
/** Service %[1]d does things. */
export interface Options%[1]d { name: string; retries?: number; map: Map<string, Array<{ id: number }>> }

export class Service%[1]d extends Base<Options%[1]d> implements Runnable {
  private readonly cache = new Map<string, number>();
  static create(opts: Options%[1]d): Service%[1]d { return new Service%[1]d(opts); }
  async run(input: string): Promise<number> {
    const re = /^[a-z]+\/{2}$/i;
    if (re.test(input)) { return input.length / 2; }
    return this.cache.get(`+"`key-${input}-${`nested ${input}`}`"+`) ?? 0;
  }
  handle = (e: Event) => { console.log("event", e, '}'); };
}

export function helper%[1]d(a: number, b: number = 2): number {
  // a comment with { braces } and 'quotes'
  return a * b + %[1]d;
}

export const arrow%[1]d = async (x: string): Promise<string> => x.trim();
type Alias%[1]d = Options%[1]d | null;
`, i)
	}
	return []byte(b.String())
}

// BenchmarkOutlineLargeTS outlines about 1 MiB of TypeScript.
func BenchmarkOutlineLargeTS(b *testing.B) {
	src := largeTS()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	done := cputime.Start(b)
	for b.Loop() {
		o := JS(src, Options{TypeScript: true})
		if len(o.Decls) == 0 {
			b.Fatal("empty outline")
		}
	}
	done()
}

// BenchmarkOutline2MiB outlines 2 MiB sources (a generated Go file, a
// minified bundle, hand-written TypeScript): what one /o of a large file
// costs. It reports, besides allocations, the peak growth of the heap
// during one outline (peak-heap-MiB, sampled), which is what concurrent
// requests add up.
func BenchmarkOutline2MiB(b *testing.B) {
	ts := largeTS()
	ts = append(ts, ts...)
	for _, c := range []struct {
		name string
		src  []byte
	}{{"generated.go", generatedGo(2 << 20)}, {"bundle.js", bundledJS(2 << 20)}, {"large.ts", ts[:2<<20]}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.src)))
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				peak = max(peak, peakHeap(func() { File(c.name, c.src) }))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// peakHeap runs fn and returns the largest growth of the heap's objects
// seen while it ran (sampled about every 20 µs, from a collected start).
func peakHeap(fn func()) uint64 {
	read := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(20 * time.Microsecond)
		defer t.Stop()
		for {
			if h := read(); h > base && h-base > peak.Load() {
				peak.Store(h - base)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return peak.Load()
}

package outline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hubdev/hub/geturl/internal/cputime"
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

package files

import "slices"

// share splits budget among demands max-min fairly ("water filling"): in
// ascending order of demand each file gets the smaller of what it wants and
// an equal split of what is left, so nobody gets less than budget/n unless it
// asked for less, and nothing is left idle while someone still wants more.
// No allowance exceeds limit. It writes the allowances to alloc, which is
// as long as demands.
func share(alloc, demands []int, budget, limit int) {
	clear(alloc)
	var small [8]int // a read names at most 8 paths by default: no allocation
	order := small[:0]
	for i, d := range demands {
		if d > 0 {
			order = append(order, i)
		}
	}
	// Stable, so equal demands are served in request order and the split
	// is deterministic.
	slices.SortStableFunc(order, func(a, b int) int { return demands[a] - demands[b] })
	left := max(budget, 0)
	for k, i := range order {
		fair := left / (len(order) - k)
		alloc[i] = min(demands[i], fair, limit)
		left -= alloc[i]
	}
	// Integer division can strand a few bytes; hand them out in request
	// order to files still short of their demand.
	for i := range alloc {
		if left == 0 {
			break
		}
		if extra := min(demands[i], limit) - alloc[i]; extra > 0 {
			extra = min(extra, left)
			alloc[i] += extra
			left -= extra
		}
	}
}

package files

import "slices"

// share splits budget among demands max-min fairly ("water filling"): in
// ascending order of demand each file gets the smaller of what it wants and
// an equal split of what is left, so nobody gets less than budget/n unless it
// asked for less, and nothing is left idle while someone still wants more.
// No allowance exceeds limit.
func share(demands []int, budget, limit int) []int {
	alloc := make([]int, len(demands))
	order := make([]int, 0, len(demands))
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
	return alloc
}

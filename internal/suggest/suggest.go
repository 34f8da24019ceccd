// Package suggest finds the likely intended word for a misspelt one, for
// "did you mean ...?" hints.
package suggest

// MaxDistance is the largest edit distance Closest accepts.
const MaxDistance = 2

// Closest returns the candidate nearest to word by Levenshtein distance, if
// one is within MaxDistance; the first of equally near candidates wins.
func Closest(word string, candidates []string) string {
	best, bestD := "", MaxDistance+1
	for _, c := range candidates {
		if d := Distance(word, c, bestD); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Distance returns the Levenshtein distance between a and b, or limit when
// it is at least limit (which lets a caller stop early).
func Distance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// Package suggest finds the word nearest to a mistyped one, for "did you mean …?" hints.
package suggest

import "strings"

// Nearest is the candidate nearest to word, or "" when none is near enough: an edit
// distance of at most a third of the word (at least 1), or a candidate that starts with word.
func Nearest(word string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := EditDistance(word, c)
		if strings.HasPrefix(c, word) && len(word) >= 2 {
			d = min(d, 1)
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" || bestDist > max(1, len(word)/3) {
		return ""
	}
	return best
}

// EditDistance is the Levenshtein distance of a and b, in bytes.
func EditDistance(a, b string) int {
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
	return prev[len(b)]
}

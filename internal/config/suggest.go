package config

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxSuggestLen bounds the words suggest compares, keeping its cost small on
// hostile input; names are at most 63 characters anyway.
const maxSuggestLen = 64

// suggest returns the candidate that word is most plausibly a typo of, or ""
// if none is close. Close means an edit distance (ignoring case) of at most 2,
// or 1 for candidates shorter than 4 characters, where 2 edits would turn
// almost anything into them. Ties go to the earliest candidate.
func suggest(word string, candidates []string) string {
	if word == "" || len(word) > maxSuggestLen {
		return ""
	}
	lw := strings.ToLower(word)
	best, bestDist := "", 3
	for _, c := range candidates {
		if c == word || len(c) > maxSuggestLen {
			continue
		}
		limit := 2
		if utf8.RuneCountInString(c) < 4 {
			limit = 1
		}
		limit = min(limit, bestDist-1)
		if limit < 0 {
			break
		}
		if d := distance(lw, strings.ToLower(c), limit); d <= limit {
			best, bestDist = c, d
		}
	}
	return best
}

// didYouMean formats suggest's answer as a hint, or returns "".
func didYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return ""
}

// distance is the Levenshtein distance between a and b in runes. It returns
// limit+1 as soon as the distance is known to exceed limit.
func distance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if abs(len(ra)-len(rb)) > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Suggest returns the candidate that word is most plausibly a typo of, or ""
// (the rule of the config's "did you mean" hints, for other callers such as
// the control socket's unknown process names).
func Suggest(word string, candidates []string) string { return suggest(word, candidates) }

package main

import "strconv"

// count says "1 process" or "2 processes": a summary line reads as English.
func count(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	return strconv.Itoa(n) + " " + plural
}

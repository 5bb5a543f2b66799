//go:build !amd64

package logs

// plainBlocks returns the index of the first byte of s that needs escaping
// or a look at its UTF-8 (see plainPrefix), or where fewer than eight bytes
// are left.
func plainBlocks(s []byte) int { return plainWords(s) }

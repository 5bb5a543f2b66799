package logs

// plainBlocks returns the index of the first byte of s that needs escaping
// or a look at its UTF-8 (see plainPrefix), or, if there is none in s's
// whole blocks of 16 bytes, where fewer than 16 are left. SSE2 (every
// amd64 has it), 16 bytes at a time: a JSON line of podvisor's is mostly
// this scan and one copy. plain_amd64.s; plainWords is the same in Go,
// and FuzzJSONLine holds the two to each other.
//
//go:noescape
func plainBlocks(s []byte) int

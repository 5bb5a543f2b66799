package logs

// TermText turns what a program writes to a terminal into log text
// (docs/operate.md, "Interactive processes"): CR is dropped (a CR LF line
// end becomes LF; a progress bar's redraws run together on one line),
// escape sequences (CSI, OSC, DCS/SOS/PM/APC strings and the two-byte
// ones) and other control characters but tab and LF are removed. It keeps
// its state between calls, so a sequence split across two reads is still
// recognised. Attachers see the raw bytes; only the log gets this.
type TermText struct {
	st termState
}

type termState uint8

const (
	termText   termState = iota
	termEsc              // after ESC
	termCSI              // in ESC [ ... final byte 0x40-0x7E
	termString           // in OSC/DCS/SOS/PM/APC, until BEL or ESC \
	termStrEsc           // ESC inside a string: "\" ends it
	termEscInt           // ESC followed by intermediates (0x20-0x2F): one final byte ends it
)

// Filter appends p's text to dst and returns it.
func (t *TermText) Filter(dst, p []byte) []byte {
	for _, b := range p {
		switch t.st {
		case termText:
			switch {
			case b == 0x1b:
				t.st = termEsc
			case b == '\n' || b == '\t' || (b >= 0x20 && b != 0x7f):
				dst = append(dst, b)
			}
			// other C0 controls, CR and DEL are dropped
		case termEsc:
			switch {
			case b == '[':
				t.st = termCSI
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				t.st = termString
			case b >= 0x20 && b <= 0x2f:
				t.st = termEscInt
			case b == 0x1b:
				// ESC ESC: the first was alone
			default:
				t.st = termText
			}
		case termCSI:
			if b >= 0x40 && b <= 0x7e {
				t.st = termText
			} else if b == 0x1b {
				t.st = termEsc
			}
		case termString:
			switch b {
			case 0x07:
				t.st = termText
			case 0x1b:
				t.st = termStrEsc
			}
		case termStrEsc:
			if b == '\\' {
				t.st = termText
			} else if b != 0x1b {
				t.st = termString
			}
		case termEscInt:
			if b < 0x20 || b > 0x2f {
				t.st = termText
			}
		}
	}
	return dst
}

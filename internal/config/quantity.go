package config

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// A quantity is written as Kubernetes writes resource amounts
// (docs/reference.md, resources): a number (12, 0.5, .5, 5.) with an
// optional suffix, binary (Ki Mi Gi Ti Pi Ei), decimal (n u m k M G T P E)
// or an exponent (e3, E-2). The value is exact, rounded up to the unit
// asked for, as a Kubernetes Quantity's Value and MilliValue are.

// maxQuantityLen bounds the text, and so the work of the exact arithmetic.
const maxQuantityLen = 64

// ParseBytes reads a quantity as a whole number of bytes, rounded up.
func ParseBytes(s string) (int64, error) { return parseQuantity(s, 0) }

// ParseMillicores reads a quantity of CPUs as millicores, rounded up
// (0.5 and 500m are both 500).
func ParseMillicores(s string) (int64, error) { return parseQuantity(s, 3) }

var binarySuffixes = map[string]uint{"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

var decimalSuffixes = map[string]int{"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

// parseQuantity returns the quantity s times 10^scale, rounded up.
func parseQuantity(s string, scale int) (int64, error) {
	bad := func(why string) error { return fmt.Errorf("invalid quantity %s: %s", strconv.Quote(s), why) }
	if s == "" {
		return 0, bad("empty")
	}
	if len(s) > maxQuantityLen {
		return 0, bad("too long")
	}
	rest := s
	switch rest[0] {
	case '-':
		return 0, bad("negative")
	case '+':
		rest = rest[1:]
	}
	whole := leadingDigits(rest)
	rest = rest[len(whole):]
	var frac string
	if strings.HasPrefix(rest, ".") {
		frac = leadingDigits(rest[1:])
		rest = rest[1+len(frac):]
	}
	if whole == "" && frac == "" {
		return 0, bad("no number")
	}
	num := new(big.Int)
	num.SetString("0"+whole+frac, 10)
	den := pow(10, uint(len(frac)))
	exp, err := suffixExponent(rest)
	if err != nil {
		return 0, bad(err.Error())
	}
	exp.ten += scale
	num.Mul(num, pow(2, exp.two))
	if exp.ten >= 0 {
		num.Mul(num, pow(10, uint(exp.ten)))
	} else {
		den.Mul(den, pow(10, uint(-exp.ten)))
	}
	// Round up: (num + den - 1) / den.
	num.Add(num, den).Sub(num, big.NewInt(1)).Quo(num, den)
	if !num.IsInt64() {
		return 0, bad("too large")
	}
	return num.Int64(), nil
}

// exponents is a suffix's factor: 2^two * 10^ten.
type exponents struct {
	two uint
	ten int
}

// maxExponent keeps 10^e small; anything beyond is out of range anyway
// (or zero, which the callers refuse).
const maxExponent = 60

func suffixExponent(suffix string) (exponents, error) {
	if b, ok := binarySuffixes[suffix]; ok {
		return exponents{two: b}, nil
	}
	if d, ok := decimalSuffixes[suffix]; ok {
		return exponents{ten: d}, nil
	}
	if len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E') {
		e, err := strconv.Atoi(suffix[1:])
		if err != nil {
			return exponents{}, fmt.Errorf("exponent %s is not a whole number", strconv.Quote(suffix[1:]))
		}
		if e > maxExponent || e < -maxExponent {
			return exponents{}, errors.New("exponent out of range")
		}
		return exponents{ten: e}, nil
	}
	msg := "unknown suffix " + strconv.Quote(suffix)
	switch strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(suffix, "B"), "b")) {
	case "k", "ki":
		msg += `: Kubernetes writes Ki (1024) or k (1000)`
	case "m", "mi", "g", "gi", "t", "ti", "p", "pi", "e", "ei":
		u := strings.ToUpper(suffix[:1])
		msg += ": Kubernetes writes " + u + "i (1024s) or " + u + " (1000s)"
	}
	return exponents{}, errors.New(msg)
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return s[:i]
}

func pow(base int64, e uint) *big.Int {
	return new(big.Int).Exp(big.NewInt(base), big.NewInt(int64(e)), nil)
}

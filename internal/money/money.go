// Package money holds amounts as whole cents so that bid arithmetic is exact.
package money

import (
	"errors"
	"strconv"
	"strings"
)

// Amount is a non-negative-by-convention quantity of a currency's minor unit
// (cents). Every currency sniped supports has two decimal places.
type Amount int64

// MaxAmount bounds parsed amounts (one billion units) so that arithmetic on
// them can never overflow.
const MaxAmount Amount = 1_000_000_000_00

// ErrSyntax is returned by Parse for text that is not a decimal with at most
// two places.
var ErrSyntax = errors.New("must be a decimal number with at most 2 decimal places")

// ErrRange is returned by Parse for amounts above MaxAmount.
var ErrRange = errors.New("must be at most 1000000000.00")

// Parse reads a non-negative decimal such as "12", "12.5" or "12.50".
// It rejects signs, exponents, more than two decimal places, and anything
// that is not plain digits, because floats would round bids.
func Parse(s string) (Amount, error) {
	whole, frac, hasDot := strings.Cut(s, ".")
	// "", "." and "12." have no digits where digits must be.
	if (whole == "" && !hasDot) || (hasDot && frac == "") || len(frac) > 2 || !digits(whole) || !digits(frac) {
		return 0, ErrSyntax
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 10 {
		return 0, ErrRange
	}
	var units int64
	if whole != "" {
		n, err := strconv.ParseInt(whole, 10, 64)
		if err != nil {
			return 0, ErrSyntax
		}
		units = n
	}
	for len(frac) < 2 {
		frac += "0"
	}
	cents, _ := strconv.ParseInt(frac, 10, 64)
	a := Amount(units*100 + cents)
	if a > MaxAmount {
		return 0, ErrRange
	}
	return a, nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// FromFloat converts a float with at most two meaningful decimals, rounding
// to the nearest cent. Use it only for values that came from JSON numbers.
func FromFloat(f float64) Amount {
	if f < 0 {
		return Amount(f*100 - 0.5)
	}
	return Amount(f*100 + 0.5)
}

// String renders the amount with exactly two decimals, e.g. "12.50".
func (a Amount) String() string {
	neg := a < 0
	if neg {
		a = -a
	}
	s := strconv.FormatInt(int64(a/100), 10) + "." + twoDigits(int64(a%100))
	if neg {
		return "-" + s
	}
	return s
}

func twoDigits(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// Float returns the amount in major units, for JSON number fields.
func (a Amount) Float() float64 { return float64(a) / 100 }

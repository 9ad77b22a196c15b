// Package param reads URL query parameters the same way for every sniped
// endpoint (the interface operations and the simulator's control surface):
// a repeated parameter is refused, so a value is never silently picked from
// several; an empty value reads as absent unless the caller asks for the raw
// value; and every failure is an *httperr.Error that names the parameter and
// the rule.
package param

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/sniped/sniped/internal/httperr"
)

// Values is a request's query, parsed once.
type Values struct{ v url.Values }

// MaxParams is the most parameters a query may hold: Go's net/url refuses
// more (its default urlmaxqueryparams), and no endpoint needs a tenth.
const MaxParams = 10_000

// Parse parses a raw query string.
func Parse(raw string) (Values, error) {
	// net/url counts parameters as '&' + 1 and refuses more than its limit
	// with an error that reads like bad encoding; say what the limit is.
	if n := strings.Count(raw, "&") + 1; n > MaxParams {
		return Values{}, &httperr.Error{Status: http.StatusBadRequest, Code: httperr.CodeInvalidParameter,
			Message: fmt.Sprintf("the query string has %d parameters; at most %d parameters are allowed", n, MaxParams)}
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		msg := "the query string is not valid URL encoding (use & between parameters and %XX escapes)"
		var esc url.EscapeError
		if !errors.As(err, &esc) && strings.Contains(raw, ";") {
			msg = "the query string uses ';' between parameters; use '&' (and %3B for a ';' inside a value)"
		}
		return Values{}, &httperr.Error{Status: http.StatusBadRequest, Code: httperr.CodeInvalidParameter, Message: msg}
	}
	return Values{v}, nil
}

// Raw returns the parameter's value and whether it was passed at all (an
// empty value counts as passed), refusing a repeated parameter.
func (p Values) Raw(name string) (string, bool, error) {
	vs, ok := p.v[name]
	if !ok {
		return "", false, nil
	}
	if len(vs) > 1 {
		return "", true, &httperr.Error{Status: http.StatusBadRequest, Code: httperr.CodeRepeatedParameter, Param: name,
			Message: fmt.Sprintf("parameter %q is given %d times; pass it once", name, len(vs))}
	}
	return vs[0], true, nil
}

// Optional returns a parameter's value; absent or empty reads as not passed.
func (p Values) Optional(name string) (string, bool, error) {
	s, ok, err := p.Raw(name)
	if err != nil || !ok || s == "" {
		return "", false, err
	}
	return s, true, nil
}

// Required returns a parameter that must be passed with a non-empty value.
func (p Values) Required(name string) (string, error) {
	s, ok, err := p.Optional(name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", httperr.Missing(name)
	}
	return s, nil
}

// Invalid is the 400 for a value of name that breaks rule (a phrase such
// as "must be 0 or 1"); the message reads "name must be 0 or 1".
func Invalid(name string, rule error) error {
	return httperr.Invalid(name, name+" "+rule.Error())
}

// PositiveInt reads a required positive integer (an item number or an id).
func (p Values) PositiveInt(name string) (int64, error) {
	s, err := p.Required(name)
	if err != nil {
		return 0, err
	}
	n, err := ParsePositiveInt(s)
	if err != nil {
		return 0, Invalid(name, err)
	}
	return n, nil
}

// Bool reads an optional 0/1 parameter; ok is false when it was not passed.
func (p Values) Bool(name string) (v, ok bool, err error) {
	s, ok, err := p.Optional(name)
	if err != nil || !ok {
		return false, false, err
	}
	v, err = ParseBool(s)
	if err != nil {
		return false, false, Invalid(name, err)
	}
	return v, true, nil
}

// ParsePositiveInt reads a positive integer up to 2^63−1 written as plain
// digits: no sign, no spaces, no exponent.
func ParsePositiveInt(s string) (int64, error) {
	if !AllDigits(s) {
		return 0, errors.New("must be a positive integer (digits only)")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("must be a positive integer at most %d", int64(math.MaxInt64))
	}
	if n <= 0 {
		return 0, errors.New("must be a positive integer (1 or more)")
	}
	return n, nil
}

// ParseBool reads the interface's booleans: exactly "0" or "1".
func ParseBool(s string) (bool, error) {
	switch s {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, errors.New("must be 0 or 1")
}

// AllDigits reports whether s is one or more ASCII digits.
func AllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// HasControl reports whether s contains a control character.
func HasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

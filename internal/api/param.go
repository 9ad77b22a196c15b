package api

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/store"
)

// Parameter limits (spec sections 4 and 8, issue 2).
const (
	MinDelay        = 1
	MaxDelay        = 15
	MaxLimit        = 20
	DefaultLimit    = 20
	MaxQueryRunes   = 255
	MaxGroupRunes   = 100
	MaxArgRunes     = 1000
	MaxOffset       = 1_000_000_000
	DefaultCountry  = "US"
	DefaultOrderBy  = "ends"
	DefaultDir      = "ASC"
	maxSearchResult = 100
)

// params is a request's query, parsed once. Each getter refuses a repeated
// parameter, so a value is never silently picked from several.
type params struct{ v url.Values }

func parseParams(raw string) (params, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return params{}, &httperr.Error{Status: http.StatusBadRequest, Code: httperr.CodeInvalidParameter,
			Message: "the query string is not valid URL encoding (use & between parameters and %XX escapes)"}
	}
	return params{v}, nil
}

// get returns the parameter's value and whether it was passed.
func (p params) get(name string) (string, bool, error) {
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

// required returns a parameter that must be passed with a non-empty value.
func (p params) required(name string) (string, error) {
	s, ok, err := p.get(name)
	if err != nil {
		return "", err
	}
	if !ok || s == "" {
		return "", httperr.Missing(name)
	}
	return s, nil
}

// optional returns a parameter's value; absent or empty reads as not passed.
func (p params) optional(name string) (string, bool, error) {
	s, ok, err := p.get(name)
	if err != nil || !ok || s == "" {
		return "", false, err
	}
	return s, true, nil
}

func invalid(param string, err error) error { return httperr.Invalid(param, param+" "+err.Error()) }

func (p params) itemNo() (int64, error) {
	s, err := p.required("item_no")
	if err != nil {
		return 0, err
	}
	n, err := parseItemNo(s)
	if err != nil {
		return 0, invalid("item_no", err)
	}
	return n, nil
}

func (p params) id() (int64, error) {
	s, err := p.required("id")
	if err != nil {
		return 0, err
	}
	n, err := parseItemNo(s)
	if err != nil {
		return 0, invalid("id", err)
	}
	return n, nil
}

// optBool reads a 0/1 parameter.
func (p params) optBool(name string) (v, ok bool, err error) {
	s, ok, err := p.optional(name)
	if err != nil || !ok {
		return false, false, err
	}
	v, err = parseBool(s)
	if err != nil {
		return false, false, invalid(name, err)
	}
	return v, true, nil
}

// optInt reads an integer parameter within [lo, hi].
func (p params) optInt(name string, lo, hi int) (int, bool, error) {
	s, ok, err := p.optional(name)
	if err != nil || !ok {
		return 0, false, err
	}
	n, err := parseIntRange(s, lo, hi)
	if err != nil {
		return 0, false, invalid(name, err)
	}
	return n, true, nil
}

// enum reads a parameter that must be one of allowed (case-sensitive).
func (p params) enum(name string, required bool, def string, allowed ...string) (string, error) {
	var s string
	var ok bool
	var err error
	if required {
		s, err = p.required(name)
		ok = err == nil
	} else {
		s, ok, err = p.optional(name)
	}
	if err != nil {
		return "", err
	}
	if !ok {
		return def, nil
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", httperr.Invalid(name, fmt.Sprintf("%s must be one of %s", name, strings.Join(allowed, ", ")))
}

func (p params) query() (string, error) {
	s, err := p.required("query")
	if err != nil {
		return "", err
	}
	q, err := parseQueryText(s)
	if err != nil {
		return "", invalid("query", err)
	}
	return q, nil
}

func (p params) country() (string, error) {
	s, ok, err := p.optional("country_code")
	if err != nil || !ok {
		return DefaultCountry, err
	}
	c, err := parseCountry(s)
	if err != nil {
		return "", invalid("country_code", err)
	}
	return c, nil
}

func (p params) bid() (money.Amount, bool, error) {
	s, ok, err := p.optional("bid")
	if err != nil || !ok {
		return 0, false, err
	}
	a, err := money.Parse(s)
	if err != nil {
		if errors.Is(err, money.ErrRange) {
			return 0, false, invalid("bid", err)
		}
		return 0, false, httperr.Invalid("bid", "bid must be a decimal number of at least 0 with at most 2 decimal places, e.g. 12.50")
	}
	return a, true, nil
}

// groupName reads groupName; unlike other parameters an empty value is
// meaningful (remove the snipe from its group), so it is told apart from absent.
func (p params) groupName() (*string, error) {
	s, ok, err := p.get("groupName")
	if err != nil || !ok {
		return nil, err
	}
	g, err := parseGroupName(s)
	if err != nil {
		return nil, invalid("groupName", err)
	}
	return &g, nil
}

// parseItemNo reads a positive integer up to 2^63−1 written as plain digits.
func parseItemNo(s string) (int64, error) {
	if !allDigits(s) {
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

// parseIntRange reads a plain decimal integer in [lo, hi].
func parseIntRange(s string, lo, hi int) (int, error) {
	rule := fmt.Errorf("must be an integer from %d to %d", lo, hi)
	// Every range here starts at 0 or above, so a sign is always wrong.
	if !allDigits(s) {
		return 0, rule
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, rule
	}
	return n, nil
}

// parseBool reads the interface's booleans: exactly "0" or "1".
func parseBool(s string) (bool, error) {
	switch s {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, errors.New("must be 0 or 1")
}

// parseQueryText validates a search query: valid UTF-8, no control
// characters, 1–255 characters after trimming surrounding white space (so
// that " shoes" and "shoes" are the same saved search).
func parseQueryText(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", errors.New("must be valid UTF-8 text")
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errors.New("must not be empty or only white space")
	}
	if n := utf8.RuneCountInString(s); n > MaxQueryRunes {
		return "", fmt.Errorf("must be at most %d characters (got %d)", MaxQueryRunes, n)
	}
	if hasControl(s) {
		return "", errors.New("must not contain control characters")
	}
	return s, nil
}

// parseGroupName validates a Bid Group name; "" is allowed (no group).
func parseGroupName(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", errors.New("must be valid UTF-8 text")
	}
	s = strings.TrimSpace(s)
	if n := utf8.RuneCountInString(s); n > MaxGroupRunes {
		return "", fmt.Errorf("must be at most %d characters (got %d)", MaxGroupRunes, n)
	}
	if hasControl(s) {
		return "", errors.New("must not contain control characters")
	}
	return s, nil
}

// parseCountry reads a two-letter ASCII country code, normalised to upper case.
func parseCountry(s string) (string, error) {
	if len(s) != 2 || !asciiLetter(s[0]) || !asciiLetter(s[1]) {
		return "", errors.New("must be a two-letter country code such as US")
	}
	return strings.ToUpper(s), nil
}

// parseFilter maps getUserItems' filter to the store's.
func parseFilter(s string) store.Filter { return store.Filter(s) }

func allDigits(s string) bool {
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

func asciiLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// echoArg validates a justTesting argument: valid UTF-8, bounded length.
func echoArg(name, s string) error {
	if !utf8.ValidString(s) {
		return httperr.Invalid(name, name+" must be valid UTF-8 text")
	}
	if n := utf8.RuneCountInString(s); n > MaxArgRunes {
		return httperr.Invalid(name, fmt.Sprintf("%s must be at most %d characters (got %d)", name, MaxArgRunes, n))
	}
	return nil
}

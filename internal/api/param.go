package api

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sniped/sniped/internal/httperr"
	"github.com/sniped/sniped/internal/money"
	"github.com/sniped/sniped/internal/param"
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

// params is a request's query (package param) with the interface's own
// parameter rules on top.
type params struct{ param.Values }

func parseParams(raw string) (params, error) {
	v, err := param.Parse(raw)
	return params{v}, err
}

func (p params) itemNo() (int64, error) { return p.PositiveInt("item_no") }

func (p params) id() (int64, error) { return p.PositiveInt("id") }

// optID reads an optional id (getSearchResults runs saved search id).
func (p params) optID() (int64, bool, error) {
	if _, ok, err := p.Optional("id"); err != nil || !ok {
		return 0, false, err
	}
	id, err := p.PositiveInt("id")
	return id, err == nil, err
}

// optBool reads a 0/1 parameter.
func (p params) optBool(name string) (v, ok bool, err error) { return p.Bool(name) }

// optInt reads an integer parameter within [lo, hi].
func (p params) optInt(name string, lo, hi int) (int, bool, error) {
	s, ok, err := p.Optional(name)
	if err != nil || !ok {
		return 0, false, err
	}
	n, err := parseIntRange(s, lo, hi)
	if err != nil {
		return 0, false, param.Invalid(name, err)
	}
	return n, true, nil
}

// enum reads a parameter that must be one of allowed (case-sensitive).
func (p params) enum(name string, required bool, def string, allowed ...string) (string, error) {
	var s string
	var ok bool
	var err error
	if required {
		s, err = p.Required(name)
		ok = err == nil
	} else {
		s, ok, err = p.Optional(name)
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
	s, err := p.Required("query")
	if err != nil {
		return "", err
	}
	q, err := parseQueryText(s)
	if err != nil {
		return "", param.Invalid("query", err)
	}
	return q, nil
}

func (p params) country() (string, error) {
	s, ok, err := p.Optional("country_code")
	if err != nil || !ok {
		return DefaultCountry, err
	}
	c, err := parseCountry(s)
	if err != nil {
		return "", param.Invalid("country_code", err)
	}
	return c, nil
}

func (p params) bid() (money.Amount, bool, error) {
	s, ok, err := p.Optional("bid")
	if err != nil || !ok {
		return 0, false, err
	}
	a, err := money.Parse(s)
	if err != nil {
		if errors.Is(err, money.ErrRange) {
			return 0, false, param.Invalid("bid", err)
		}
		return 0, false, httperr.Invalid("bid", "bid must be a decimal number of at least 0 with at most 2 decimal places, e.g. 12.50")
	}
	return a, true, nil
}

// groupName reads groupName; unlike other parameters an empty value is
// meaningful (remove the snipe from its group), so it is told apart from absent.
func (p params) groupName() (*string, error) {
	s, ok, err := p.Raw("groupName")
	if err != nil || !ok {
		return nil, err
	}
	g, err := parseGroupName(s)
	if err != nil {
		return nil, param.Invalid("groupName", err)
	}
	return &g, nil
}

// parseIntRange reads a plain decimal integer in [lo, hi].
func parseIntRange(s string, lo, hi int) (int, error) {
	rule := fmt.Errorf("must be an integer from %d to %d", lo, hi)
	// Every range here starts at 0 or above, so a sign is always wrong.
	if !param.AllDigits(s) {
		return 0, rule
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, rule
	}
	return n, nil
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
	if param.HasControl(s) {
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
	if param.HasControl(s) {
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

func asciiLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

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

package key

import (
	"strconv"
	"strings"
)

// Redacted stands in for a key in log lines.
const Redacted = "REDACTED"

// Redact replaces everything in s that looks like a key (the prefix, in any
// case, up to the next '/', '?', '&', ';', '=' or space) with Redacted, so a
// key pasted into a URL path never reaches a log line. s is decoded text
// (a URL's Path); for a raw query use RedactQuery.
func Redact(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if i+len(Prefix) <= len(s) && strings.EqualFold(s[i:i+len(Prefix)], Prefix) {
			b.WriteString(Redacted)
			i += len(Prefix)
			for i < len(s) && !strings.ContainsRune("/?&;= ", rune(s[i])) {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// maxDecodeRounds bounds how many layers of percent-encoding RedactQuery
// looks through (a key encoded twice, "%2573np_…", is still found).
const maxDecodeRounds = 4

// RedactQuery replaces, in a raw query string, the value of every parameter
// named "key" or one of names (compared after decoding and
// case-insensitively, so %6Bey or KEY do not slip through) and every parameter whose name or value holds
// something that looks like a key (a pasted key in the wrong parameter, or
// inside a longer value). It works on the raw text with a lenient decoder
// that keeps malformed escapes as they are, so a query that does not decode,
// or a key partly percent-encoded, is redacted all the same; '&' and ';'
// both count as separators.
func RedactQuery(raw string, names ...string) string {
	if !mayHoldKey(raw, names) {
		return raw // the common case: nothing to look at twice
	}
	var b strings.Builder
	b.Grow(len(raw))
	for raw != "" {
		i := strings.IndexAny(raw, "&;")
		seg, sep := raw, ""
		if i >= 0 {
			seg, sep, raw = raw[:i], raw[i:i+1], raw[i+1:]
		} else {
			raw = ""
		}
		name, value, hasValue := strings.Cut(seg, "=")
		switch {
		case holdsKey(name):
			seg = Redacted
		case hasValue && (isSecretName(name, names) || holdsKey(value)):
			seg = name + "=" + Redacted
		}
		b.WriteString(seg)
		b.WriteString(sep)
	}
	return b.String()
}

// mayHoldKey is a cheap screen: a query without a '%' or '+', without the
// prefix and without any secret name in any case holds nothing to redact.
func mayHoldKey(raw string, names []string) bool {
	if strings.IndexByte(raw, '%') >= 0 || strings.IndexByte(raw, '+') >= 0 {
		return true
	}
	low := strings.ToLower(raw)
	if strings.Contains(low, Prefix) || strings.Contains(low, "key") {
		return true
	}
	for _, n := range names {
		if strings.Contains(low, strings.ToLower(n)) {
			return true
		}
	}
	return false
}

// isSecretName reports whether a parameter name, decoded, is "key" or one
// of names, in any case.
func isSecretName(name string, names []string) bool {
	for _, d := range decodings(name) {
		d = strings.TrimSpace(d)
		if strings.EqualFold(d, "key") {
			return true
		}
		for _, n := range names {
			if strings.EqualFold(d, n) {
				return true
			}
		}
	}
	return false
}

// holdsKey reports whether s, or any of its decodings, contains the key
// prefix in any case.
func holdsKey(s string) bool {
	for _, d := range decodings(s) {
		if strings.Contains(strings.ToLower(d), Prefix) {
			return true
		}
	}
	return false
}

// decodings returns s and each successive lenient decoding of it, until a
// round changes nothing or maxDecodeRounds is reached.
func decodings(s string) []string {
	out := []string{s}
	for range maxDecodeRounds {
		d := lenientUnescape(s)
		if d == s {
			break
		}
		out = append(out, d)
		s = d
	}
	return out
}

// lenientUnescape decodes %XX escapes and '+' as url.QueryUnescape does,
// but keeps a malformed escape as it is instead of failing.
func lenientUnescape(s string) string {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b.WriteByte(' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Truncate shortens s to at most max bytes for a log line, on a UTF-8
// boundary, saying how much was cut: "…(+1234 bytes)".
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…(+" + strconv.Itoa(len(s)-cut) + " bytes)"
}

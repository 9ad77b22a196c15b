package api

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// The getUserItems answer is written by hand (AppendJSON) rather than by
// encoding/json's reflection, which cost about a twentieth of the
// operation. The output must be byte for byte what httperr.WriteJSON's
// encoder (encoding/json, SetEscapeHTML(false)) writes for the same value,
// trailing newline included: json_test.go compares the two on table-driven
// and random inputs. A field added to userItem or userItemsResponse must be
// added here too (the test fails until it is).

// AppendJSON appends r as encoding/json would encode it, with a newline.
func (r *userItemsResponse) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"status":`...)
	b = appendJSONString(b, r.Status)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, r.Message)
	b = append(b, `,"filter":`...)
	b = appendJSONString(b, r.Filter)
	b = append(b, `,"orderby":`...)
	b = appendJSONString(b, r.OrderBy)
	b = append(b, `,"dir":`...)
	b = appendJSONString(b, r.Dir)
	b = append(b, `,"show_won":`...)
	b = strconv.AppendInt(b, int64(r.ShowWon), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(r.Total), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(r.Offset), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(r.Limit), 10)
	b = append(b, `,"items":`...)
	if r.Items == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Items {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = r.Items[i].appendJSON(b); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...), nil
}

func (it *userItem) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"item_no":`...)
	b = appendJSONString(b, it.ItemNo)
	b = append(b, `,"bid":`...)
	b = appendJSONString(b, it.Bid)
	b = append(b, `,"delay":`...)
	b = strconv.AppendInt(b, int64(it.Delay), 10)
	b = append(b, `,"enabled":`...)
	b = strconv.AppendInt(b, int64(it.Enabled), 10)
	b = append(b, `,"force":`...)
	b = strconv.AppendInt(b, int64(it.Force), 10)
	b = append(b, `,"group_id":`...)
	b = strconv.AppendInt(b, it.GroupID, 10)
	b = append(b, `,"groupName":`...)
	b = appendJSONString(b, it.GroupName)
	b = append(b, `,"title":`...)
	b = appendJSONString(b, it.Title)
	b = append(b, `,"currentPrice":`...)
	b, err := appendJSONFloat(b, it.CurrentPrice)
	if err != nil {
		return b, err
	}
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, it.Currency)
	b = append(b, `,"bids":`...)
	b = strconv.AppendInt(b, int64(it.Bids), 10)
	b = append(b, `,"startTime":`...)
	b = appendJSONString(b, it.StartTime)
	b = append(b, `,"endTime":`...)
	b = appendJSONString(b, it.EndTime)
	b = append(b, `,"timeLeft":`...)
	b = appendJSONString(b, it.TimeLeft)
	b = append(b, `,"fireTime":`...)
	b = appendJSONString(b, it.FireTime)
	b = append(b, `,"galleryUrl":`...)
	b = appendJSONString(b, it.GalleryURL)
	b = append(b, `,"success":`...)
	b = strconv.AppendInt(b, int64(it.Success), 10)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, it.Status)
	b = append(b, `,"shorthand":`...)
	b = appendJSONString(b, it.Shorthand)
	b = append(b, `,"color":`...)
	b = appendJSONString(b, it.Color)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, it.Message)
	return append(b, '}'), nil
}

// errJSONFloat is a NaN or infinity, which JSON cannot carry
// (encoding/json fails on them too).
type errJSONFloat float64

func (e errJSONFloat) Error() string {
	return "json: unsupported value: " + strconv.FormatFloat(float64(e), 'g', -1, 64)
}

// appendJSONFloat is encoding/json's float64 encoding: like %g, but with
// ES6's exponent cutoffs and without padding the exponent.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, errJSONFloat(f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString is encoding/json's string encoding without HTML
// escaping: '"' and '\\' escaped, control characters as \b, \f, \n, \r,
// \t or \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped,
// everything else (<, >, & and DEL included) as is.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

package api

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/sniped/sniped/internal/httperr"
)

// reflectJSON is what httperr.WriteJSON's encoder writes for v by
// reflection: the reference for the hand-written encoders.
func reflectJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// checkSameJSON fails unless r's AppendJSON writes exactly reflectJSON's
// bytes, or both fail.
func checkSameJSON(t *testing.T, r *userItemsResponse) {
	t.Helper()
	want, wantErr := reflectJSON(r)
	got, err := r.AppendJSON([]byte("prefix"))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("AppendJSON error = %v, encoding/json error = %v, for %+v", err, wantErr, r)
	}
	if err != nil {
		return
	}
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("AppendJSON dropped what the buffer held: %q", got)
	}
	got = got[len("prefix"):]
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON =\n%s\nencoding/json =\n%s\nfor %+v", got, want, r)
	}
}

func oneItem(it userItem) *userItemsResponse {
	return &userItemsResponse{Status: "OK", Items: []userItem{it}}
}

// invalid UTF-8 and edge-case strings for the string table.
var jsonStrings = []string{
	"",
	"plain ASCII title 123",
	`quote " and backslash \ and both \"`,
	"<b>HTML</b> & <script>alert('x')</script>",
	"control \x00\x01\x07\b\t\n\v\f\r\x0e\x1b\x1f end",
	"DEL \x7f",
	"ümlaut, 日本語, emoji 🎉, combining e\u0301",
	"line separator \u2028 and paragraph separator \u2029",
	"lone continuation \x80, lone lead \xc3, 0xff \xff, overlong \xc0\xaf",
	"surrogate half \xed\xa0\x80 and truncated 4-byte \xf0\x9f\x8e",
	"\ufffd the replacement character itself",
	"U+FFFF \uffff and U+10FFFF \U0010ffff",
	strings.Repeat("long é \" ", 500),
}

func TestUserItemsJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	t.Run("strings", func(t *testing.T) {
		t.Parallel()
		for _, s := range jsonStrings {
			checkSameJSON(t, oneItem(userItem{ItemNo: s, Bid: s, GroupName: s, Title: s, Currency: s,
				StartTime: s, EndTime: s, TimeLeft: s, FireTime: s, GalleryURL: s, Status: s,
				Shorthand: s, Color: s, Message: s}))
			checkSameJSON(t, &userItemsResponse{Status: s, Message: s, Filter: s, OrderBy: s, Dir: s, Items: []userItem{}})
		}
	})
	t.Run("integers", func(t *testing.T) {
		t.Parallel()
		for _, n := range []int64{0, 1, -1, 9, 10, 255, 256, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64} {
			i := int(n)
			checkSameJSON(t, &userItemsResponse{ShowWon: i, Total: i, Offset: i, Limit: i,
				Items: []userItem{{Delay: i, Enabled: i, Force: i, GroupID: n, Bids: i, Success: i}}})
		}
	})
	t.Run("floats", func(t *testing.T) {
		t.Parallel()
		for _, f := range []float64{0, math.Copysign(0, -1), 0.01, 0.1, 1, 12.5, 41.99, 123456789.99, -3.5,
			1e-6, 9.99e-7, 1e-7, 1.5e-10, 1e20, 1e21, 1.25e21, -1e21, 1e100, 1e-100,
			math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, float64(math.MaxInt64) / 100,
			math.NaN(), math.Inf(1), math.Inf(-1)} {
			checkSameJSON(t, oneItem(userItem{CurrentPrice: f}))
		}
	})
	t.Run("items", func(t *testing.T) {
		t.Parallel()
		checkSameJSON(t, &userItemsResponse{})                           // nil items: null
		checkSameJSON(t, &userItemsResponse{Items: []userItem{}})        // empty: []
		checkSameJSON(t, &userItemsResponse{Items: make([]userItem, 3)}) // zero items
		checkSameJSON(t, &userItemsResponse{Items: []userItem{{CurrentPrice: 1}, {CurrentPrice: math.NaN()}}})
	})
}

// randomString mixes the characters that matter to the encoder: ASCII,
// every control character, quotes, HTML, multi-byte runes, U+2028/2029
// and bytes that are not UTF-8.
func randomString(r *rand.Rand) string {
	pieces := []string{"a", "Z", "0", " ", `"`, `\`, "/", "<", ">", "&", "'", "\x7f", "é", "日", "🎉",
		"\u2028", "\u2029", "\ufffd", "\x80", "\xff", "\xc3", "\xed\xa0\x80", "\xf0\x9f"}
	var b strings.Builder
	for range r.IntN(40) {
		if r.IntN(4) == 0 {
			b.WriteByte(byte(r.IntN(0x20)))
			continue
		}
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// fillRandom sets every field of the struct v points to, by reflection, so
// that a field added to the type but not to its AppendJSON fails the test.
func fillRandom(r *rand.Rand, v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(randomString(r))
		case reflect.Int, reflect.Int64:
			switch r.IntN(4) {
			case 0:
				f.SetInt(int64(r.Uint64()))
			case 1:
				f.SetInt(int64(r.IntN(2001) - 1000))
			default:
				f.SetInt(int64(r.IntN(2)))
			}
		case reflect.Float64:
			switch r.IntN(3) {
			case 0:
				f.SetFloat(math.Float64frombits(r.Uint64())) // any float, NaN and infinities included
			case 1:
				f.SetFloat(float64(r.Int64N(1e12)) / 100) // a price
			default:
				f.SetFloat(r.NormFloat64() * math.Pow(10, float64(r.IntN(50)-25)))
			}
		case reflect.Slice:
			n := r.IntN(4)
			if n == 0 && r.IntN(2) == 0 {
				f.Set(reflect.Zero(f.Type()))
				continue
			}
			s := reflect.MakeSlice(f.Type(), n, n)
			for j := range n {
				fillRandom(r, s.Index(j))
			}
			f.Set(s)
		default:
			panic("fillRandom: no rule for " + f.Type().String() + "; add one and encode the field in AppendJSON")
		}
	}
}

func TestUserItemsJSONRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(20261124, 12))
	for range 5000 {
		var resp userItemsResponse
		fillRandom(r, reflect.ValueOf(&resp).Elem())
		checkSameJSON(t, &resp)
	}
}

func FuzzUserItemJSON(f *testing.F) {
	for _, s := range jsonStrings {
		f.Add(s, 41.5, int64(7))
	}
	f.Add("", math.Inf(1), int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, s string, price float64, n int64) {
		checkSameJSON(t, &userItemsResponse{Status: s, Total: int(n), Items: []userItem{{
			Title: s, Message: s + s, CurrentPrice: price, GroupID: n, Bids: int(n)}}})
	})
}

func TestWriteJSONUsesAppender(t *testing.T) {
	t.Parallel()
	var _ httperr.JSONAppender = (*userItemsResponse)(nil)
	resp := &userItemsResponse{Status: "OK", Message: "<1 of 1> & \"all\"", Items: []userItem{{Title: "é\u2028", CurrentPrice: 1.5}}}
	w := httptest.NewRecorder()
	httperr.WriteJSON(w, http.StatusOK, resp)
	want, _ := reflectJSON(resp)
	if got := w.Body.Bytes(); !bytes.Equal(got, want) {
		t.Errorf("WriteJSON body = %s, want %s", got, want)
	}
	if got, want := w.Header().Get("Content-Length"), strconv.Itoa(len(want)); got != want {
		t.Errorf("Content-Length = %q, want %q", got, want)
	}
}

package ebay

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sniped/sniped/internal/market"
	"github.com/sniped/sniped/internal/money"
)

// TestErrorMapping is the table of docs/outcomes.md's eBay section.
func TestErrorMapping(t *testing.T) {
	t.Parallel()
	a, err := New(Config{APIURL: "http://x", AuthURL: "http://x", ClientID: "id", ClientSecret: "s"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		api    string
		status int
		id     int
		want   error
		text   string
	}{
		{apiOffer, 400, 120008, market.ErrTooLow, ""},
		{apiOffer, 400, 120010, market.ErrCannotLowerMax, ""},
		{apiOffer, 400, 120012, market.ErrEnded, ""},
		{apiOffer, 400, 120001, market.ErrCancelled, ""},
		{apiOffer, 400, 120002, market.ErrEndedByBuyItNow, ""},
		{apiOffer, 400, 120003, market.ErrSellerCannotBid, ""},
		{apiOffer, 400, 120004, market.ErrIneligible, ""},
		{apiOffer, 400, 120006, market.ErrIneligible, ""},
		{apiOffer, 400, 120019, market.ErrIneligible, ""},
		{apiOffer, 400, 120025, market.ErrIneligible, ""},
		{apiOffer, 400, 120031, market.ErrIneligible, ""},
		{apiOffer, 400, 120009, market.ErrIneligible, ""},
		{apiOffer, 400, 120005, market.ErrBINPriceReached, ""},
		{apiOffer, 500, 120000, market.ErrUnavailable, ""},
		{apiOffer, 401, 1001, market.ErrNotAuthorized, ""},
		{apiOffer, 403, 1100, market.ErrNotAuthorized, "lacks Offer API approval"},
		{apiOffer, 403, 0, market.ErrNotAuthorized, "lacks Offer API approval"},
		{apiBrowse, 404, 11001, market.ErrNotFound, ""},
		{apiBrowse, 404, 11003, market.ErrNotFound, ""},
		{apiBrowse, 503, 11004, market.ErrUnavailable, ""},
		{apiBrowse, 502, 0, market.ErrUnavailable, ""},
		{apiBrowse, 429, 0, market.ErrUnavailable, ""},
		{apiBrowse, 404, 0, market.ErrNotFound, ""},
		{apiBrowse, 400, 99999, errUnexpected, ""},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s_%d_%d", c.api, c.status, c.id), func(t *testing.T) {
			body := fmt.Sprintf(`{"errors":[{"errorId":%d,"domain":"API","category":"REQUEST","message":"m","longMessage":"long  message\n"}]}`, c.id)
			err := a.apiError(c.api, answer{status: c.status, body: []byte(body)})
			if !errors.Is(err, c.want) {
				t.Errorf("apiError = %v, want %v", err, c.want)
			}
			if c.text != "" && !strings.Contains(err.Error(), c.text) {
				t.Errorf("apiError = %q, want it to say %q", err, c.text)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("apiError = %q carries a newline", err)
			}
		})
	}
}

func TestParseAmount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   Amount
		want money.Amount
		ok   bool
	}{
		{Amount{"24.00", "USD"}, 24_00, true},
		{Amount{"24", "USD"}, 24_00, true},
		{Amount{"0.5", "GBP"}, 50, true},
		{Amount{"12.500", "EUR"}, 12_50, true},
		{Amount{"12.505", "EUR"}, 0, false},
		{Amount{"-1.00", "USD"}, 0, false},
		{Amount{"1e3", "USD"}, 0, false},
		{Amount{"24.00", ""}, 0, false},
		{Amount{"24.00", "US"}, 0, false},
		{Amount{"", "USD"}, 0, false},
	}
	for _, c := range cases {
		got, cur, err := parseAmount(c.in)
		if (err == nil) != c.ok || got != c.want || (c.ok && cur != c.in.Currency) {
			t.Errorf("parseAmount(%+v) = %v %q %v, want %v ok=%v", c.in, got, cur, err, c.want, c.ok)
		}
	}
}

func TestStatusOnlyAnswers(t *testing.T) {
	t.Parallel()
	a, _ := New(Config{APIURL: "http://x", AuthURL: "http://x", ClientID: "id", ClientSecret: "s"})
	for _, body := range []string{"", "<html>gateway</html>", `{"errors":null}`, `{"errors":[]}`} {
		if err := a.apiError(apiBrowse, answer{status: http.StatusServiceUnavailable, body: []byte(body)}); !errors.Is(err, market.ErrUnavailable) {
			t.Errorf("503 %q = %v, want ErrUnavailable", body, err)
		}
	}
}

// FuzzParseErrors: eBay's error envelope never panics the parser, and
// whatever it reads maps to an error that names a sentinel or says it is
// unexpected.
func FuzzParseErrors(f *testing.F) {
	for _, s := range []string{
		`{"errors":[{"errorId":120008,"domain":"API_OFFER","category":"REQUEST","message":"too low","parameters":[{"name":"a","value":"b"}]}]}`,
		`{"errors":[{"errorId":"x"}]}`, `{"errors":{}}`, `[]`, ``, `{"errors":[{"errorId":1e30}]}`,
	} {
		f.Add([]byte(s), 400)
	}
	a, _ := New(Config{APIURL: "http://x", AuthURL: "http://x", ClientID: "id", ClientSecret: "s"})
	f.Fuzz(func(t *testing.T, body []byte, status int) {
		_ = parseErrors(body)
		err := a.apiError(apiOffer, answer{status: status, body: body})
		if err == nil {
			t.Fatal("apiError returned nil")
		}
		known := []error{market.ErrTooLow, market.ErrCannotLowerMax, market.ErrEnded, market.ErrCancelled, market.ErrEndedByBuyItNow,
			market.ErrSellerCannotBid, market.ErrIneligible, market.ErrBINPriceReached, market.ErrUnavailable, market.ErrNotAuthorized,
			market.ErrNotFound, errUnexpected}
		for _, k := range known {
			if errors.Is(err, k) {
				return
			}
		}
		t.Fatalf("apiError(%d, %q) = %v wraps no known error", status, body, err)
	})
}

// FuzzParseAmount: an accepted amount formats back to the same value.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"24.00", "0", "0.5", "12.500", "999999999.99", "1000000000.01", "-1", "1e2", " 3.10 ", "١٢"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		m, _, err := parseAmount(Amount{Value: v, Currency: "USD"})
		if err != nil {
			return
		}
		if m < 0 || m > money.MaxAmount {
			t.Fatalf("parseAmount(%q) = %v out of range", v, m)
		}
		back, _, err := parseAmount(formatAmount(m, "USD"))
		if err != nil || back != m {
			t.Fatalf("round trip of %q: %v → %v, %v", v, m, back, err)
		}
	})
}

func TestIdentityBase(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://api.ebay.com":         "https://apiz.ebay.com",
		"https://api.sandbox.ebay.com": "https://apiz.sandbox.ebay.com",
		"http://127.0.0.1:9090":        "http://127.0.0.1:9090",
		"https://api.example.org":      "https://api.example.org",
	} {
		if got := identityBase(in); got != want {
			t.Errorf("identityBase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExplanations(t *testing.T) {
	t.Parallel()
	a, _ := New(Config{APIURL: "http://x", AuthURL: "http://x", ClientID: "id", ClientSecret: "s"})
	err := a.apiError(apiOffer, answer{status: 403, body: []byte(`{"errors":[{"errorId":1100,"message":"Insufficient permissions to fulfill the request."}]}`)})
	if got := market.Explain(err); !strings.Contains(got, "Offer API approval") || strings.Contains(got, "http") {
		t.Errorf("Explain(403/1100) = %q, want the approval explanation without internals", got)
	}
	if got := market.Explain(a.apiError(apiOffer, answer{status: 400, body: []byte(`{"errors":[{"errorId":120008}]}`)})); got != "" {
		t.Errorf("Explain(120008) = %q, want none (the outcome says it)", got)
	}
}

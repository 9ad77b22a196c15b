package api_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestSavedSearches(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.call("addSearch", "query", "  leica m3 ")
	r.wantOK(t)
	id := integer(t, r.body, "id")
	if str(t, r.body, "query") != "leica m3" || !boolean(t, r.body, "new_search") || !dateTimeRE.MatchString(str(t, r.body, "created_at")) {
		t.Errorf("addSearch = %s", r.raw)
	}
	r = b.call("addSearch", "query", "leica m3")
	r.wantOK(t)
	if integer(t, r.body, "id") != id || boolean(t, r.body, "new_search") {
		t.Errorf("second addSearch = %s, want the existing id %d", r.raw, id)
	}
	b.call("addSearch", "query", strings.Repeat("é", 255)).wantOK(t)

	r = b.call("getUserSearches")
	r.wantOK(t)
	list := arr(t, r.body, "searches")
	if len(list) != 2 {
		t.Fatalf("getUserSearches = %s, want 2 searches", r.raw)
	}
	first := list[0].(map[string]any)
	if integer(t, first, "id") != id || str(t, first, "query") != "leica m3" || !dateTimeRE.MatchString(str(t, first, "created_at")) {
		t.Errorf("first search = %v", first)
	}
	if r := b.callKey(b.otherKey, "getUserSearches"); len(arr(t, r.body, "searches")) != 0 {
		t.Errorf("other account sees searches: %s", r.raw)
	}

	b.callKey(b.otherKey, "deleteSearch", "id", itoa(id)).wantError(t, 404, "not_found", "id")
	r = b.call("deleteSearch", "id", itoa(id))
	r.wantOK(t)
	if integer(t, r.body, "id") != id {
		t.Errorf("deleteSearch = %s", r.raw)
	}
	b.call("deleteSearch", "id", itoa(id)).wantError(t, 404, "not_found", "id")

	for _, tt := range []struct {
		op, raw string
		code    string
		param   string
	}{
		{"addSearch", "", "missing_parameter", "query"},
		{"addSearch", "query=", "missing_parameter", "query"},
		{"addSearch", "query=%20%20", "invalid_parameter", "query"},
		{"addSearch", "query=" + strings.Repeat("x", 256), "invalid_parameter", "query"},
		{"addSearch", "query=" + strings.Repeat("%C3%A9", 256), "invalid_parameter", "query"},
		{"addSearch", "query=%FF", "invalid_parameter", "query"},
		{"addSearch", "query=a%00b", "invalid_parameter", "query"},
		{"addSearch", "query=a&query=b", "repeated_parameter", "query"},
		{"deleteSearch", "", "missing_parameter", "id"},
		{"deleteSearch", "id=0", "invalid_parameter", "id"},
		{"deleteSearch", "id=-3", "invalid_parameter", "id"},
		{"deleteSearch", "id=x", "invalid_parameter", "id"},
	} {
		b.raw(http.MethodGet, "/"+tt.op+"?key="+b.paidKey+"&"+tt.raw).wantError(t, 400, tt.code, tt.param)
	}
}

func TestGetSearchResults(t *testing.T) {
	t.Parallel()
	b := setup(t)
	want := b.item(titled("Zorblax M3 body"))
	b.item(titled("Zorblax M6"), country("DE"))
	b.item(titled("Nikon F"))
	r := b.call("getSearchResults", "query", "zorblax")
	r.wantOK(t)
	items := arr(t, r.body, "items")
	if str(t, r.body, "country_code") != "US" || integer(t, r.body, "count") != 1 || len(items) != 1 {
		t.Fatalf("getSearchResults = %s, want 1 US item", r.raw)
	}
	e := items[0].(map[string]any)
	for _, k := range []string{"item_no", "title", "currency", "endTime", "timeLeft", "galleryUrl", "country"} {
		str(t, e, k)
	}
	integer(t, e, "bids")
	num(t, e, "currentPrice")
	if e["item_no"] != itoa(want.ItemNo) || e["country"] != "US" {
		t.Errorf("result = %v", e)
	}
	r = b.call("getSearchResults", "query", "zorblax", "country_code", "de")
	r.wantOK(t)
	if str(t, r.body, "country_code") != "DE" || integer(t, r.body, "count") != 1 {
		t.Errorf("country de = %s", r.raw)
	}
	for _, tt := range []struct {
		kv    []string
		code  string
		param string
	}{
		{nil, "missing_parameter", "query"},
		{[]string{"query", "x", "country_code", "USA"}, "invalid_parameter", "country_code"},
		{[]string{"query", "x", "country_code", "1A"}, "invalid_parameter", "country_code"},
		{[]string{"query", "x", "country_code", "ÜS"}, "invalid_parameter", "country_code"},
		{[]string{"query", strings.Repeat("q", 256)}, "invalid_parameter", "query"},
	} {
		b.call("getSearchResults", tt.kv...).wantError(t, 400, tt.code, tt.param)
	}
}

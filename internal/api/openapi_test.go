package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/sniped/sniped/internal/api"
)

var (
	docOnce   sync.Once
	docErr    error
	theDoc    *openapi3.T
	docRouter routers.Router
)

// loadDoc loads and validates the embedded OpenAPI document once.
func loadDoc(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	docOnce.Do(func() {
		loader := openapi3.NewLoader()
		theDoc, docErr = loader.LoadFromData(api.OpenAPI())
		if docErr != nil {
			return
		}
		if docErr = theDoc.Validate(loader.Context); docErr != nil {
			return
		}
		// Route by path alone: the test server's address is not a documented server.
		theDoc.Servers = nil
		docRouter, docErr = legacy.NewRouter(theDoc)
	})
	if docErr != nil {
		t.Fatalf("openapi.json: %v", docErr)
	}
	return theDoc, docRouter
}

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	doc, _ := loadDoc(t)
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi = %q, want 3.1", doc.OpenAPI)
	}
	ops := []string{"justTesting", "addBid", "deleteBid", "addSearch", "deleteSearch", "fetchItem", "checkSnipeStatus",
		"getSearchResults", "getUserItems", "getUserSearches", "importWatchList", "getBidHistoryDataset", "getBidderDataset",
		"connectMarketAccount", "getMarketAccount", "unlinkMarketAccount",
		"addNotifier", "getNotifiers", "deleteNotifier", "testNotifier", "lookupItem", "getEvents"}
	paths := map[string]string{"/market/callback": "marketCallback"}
	for _, op := range ops {
		paths["/"+op] = op
	}
	for path, op := range paths {
		p := doc.Paths.Find(path)
		if p == nil || p.Get == nil {
			t.Errorf("openapi.json has no GET %s", path)
			continue
		}
		if p.Get.OperationID != op {
			t.Errorf("%s operationId = %q", path, p.Get.OperationID)
		}
	}
	if n := doc.Paths.Len(); n != len(paths) {
		t.Errorf("openapi.json has %d paths, want %d", n, len(paths))
	}
}

// validating wraps h so that every response the test suite provokes is
// checked against openapi.json: documented operations through
// openapi3filter (status must be documented, body must match its schema),
// everything else (unknown operations, wrong methods) against the Error
// envelope.
func validating(t *testing.T, h http.Handler) http.Handler {
	doc, router := loadDoc(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		res := rec.Result()
		body := rec.Body.Bytes()
		if err := validateResponse(r, res, body, doc, router); err != nil {
			t.Errorf("response to %s %s does not match openapi.json: %v\nbody: %s", r.Method, r.URL.Path, err, body)
		}
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(body)
	})
}

func validateResponse(r *http.Request, res *http.Response, body []byte, doc *openapi3.T, router routers.Router) error {
	// HEAD has no body; openapi.json is the document itself; a request
	// whose client left gets no response at all.
	if r.Method == http.MethodHead || r.URL.Path == "/openapi.json" || r.Context().Err() != nil {
		return nil
	}
	route, pathParams, err := router.FindRoute(r)
	if err != nil {
		// Not a documented operation or method: it must be the envelope.
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return err
		}
		return doc.Components.Schemas["Error"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: pathParams, Route: route, Options: opts}
	return openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 res.StatusCode,
		Header:                 res.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                opts,
	})
}

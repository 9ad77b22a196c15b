package api

import (
	_ "embed"
	"net/http"
)

// openAPIDoc is the hand-written OpenAPI 3.1 description of the interface.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the embedded OpenAPI document.
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

func openAPIHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(openAPIDoc)
	})
}

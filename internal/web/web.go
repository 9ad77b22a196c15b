// Package web serves sniped's dashboard: a static page (HTML, CSS and plain
// JavaScript, embedded with go:embed, no build step) that talks to the
// public interface operations with the user's key, exactly like any other
// client. The page has no private API.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// contentSecurityPolicy keeps the page to its own scripts and styles and to
// same-origin API calls. Images may come from the marketplace's hosts.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' http: https: data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// file is one embedded asset, prepared once.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the dashboard. Mount it at {base}/ui/, with or without
// http.StripPrefix: everything up to and including the last "/ui/" in the
// path is ignored, so the page works under any --base-path. The page finds
// the interface at the part of its own URL before "/ui/".
func Handler() http.Handler {
	files := map[string]file{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = http.DetectContentType(body)
		}
		files[strings.TrimPrefix(p, "static/")] = file{
			body:        body,
			contentType: ct,
			etag:        `"` + hex.EncodeToString(sum[:8]) + `"`,
		}
		return nil
	})
	if err != nil {
		// The embedded tree is fixed at build time; failing to walk it is a
		// broken binary, not a runtime condition.
		panic("web: reading embedded files: " + err.Error())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := r.URL.Path
		if i := strings.LastIndex(name, "/ui/"); i >= 0 {
			name = name[i+len("/ui/"):]
		}
		name = strings.TrimPrefix(name, "/")
		if name == "" {
			name = "index.html"
		}
		f, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.contentType)
		h.Set("ETag", f.etag)
		// Revalidate every time: the files are small and change with the binary.
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
	})
}

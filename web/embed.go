// Package web is Hangar's browser client: one page (index.html, style.css
// and hangar.js, the bundle web/app builds from TypeScript on the SDK, see
// web/app/package.json) that plays and watches matches through the
// server's Connect API, served by `hangar serve` at "/". The bundle is
// committed, so serving the page needs no Node.js.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Handler serves the page's files: index.html at "/", the modules and the
// style sheet beside it. Anything else is 404. Files are revalidated on
// every load (no-cache), so a new server version's page replaces the old.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}

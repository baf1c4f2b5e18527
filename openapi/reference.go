package openapi

import (
	"embed"
	"net/http"
)

// The rendered reference is Redoc (redoc.standalone.js, from npm at the
// version tools/openapi/package-lock.json pins, copied here by
// scripts/gen) on a static page that loads the node's /openapi.yaml.
// Nothing is fetched from elsewhere: the page's Content-Security-Policy
// keeps it to the node (Redoc's footer logo, from Redocly's site, is
// blocked and left out).
//
//go:embed reference/index.html reference/redoc.standalone.js reference/redoc.standalone.js.LICENSE.txt
var reference embed.FS

// ReferencePath is where Reference serves its page.
const ReferencePath = "/docs/api"

// Reference serves the rendered API reference: the page at ReferencePath,
// and the script and its licence notice beneath it.
func Reference() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var name, ctype string
		switch r.URL.Path {
		case ReferencePath, ReferencePath + "/":
			name, ctype = "reference/index.html", "text/html; charset=utf-8"
		case ReferencePath + "/redoc.standalone.js":
			name, ctype = "reference/redoc.standalone.js", "text/javascript; charset=utf-8"
		case ReferencePath + "/redoc.standalone.js.LICENSE.txt":
			name, ctype = "reference/redoc.standalone.js.LICENSE.txt", "text/plain; charset=utf-8"
		default:
			http.NotFound(w, r)
			return
		}
		b, err := reference.ReadFile(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("X-Content-Type-Options", "nosniff")
		// Redoc styles inline (styled-components) and searches in a
		// worker it makes from a blob.
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; worker-src 'self' blob:; frame-ancestors 'none'")
		_, _ = w.Write(b)
	})
}

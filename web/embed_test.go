package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	h := Handler()
	for _, c := range []struct {
		method, path string
		status       int
		contentType  string
		body         string
	}{
		{"GET", "/", 200, "text/html", `<script type="module" src="hangar.js">`},
		{"GET", "/hangar.js", 200, "text/javascript", "aeroplane.position.hangar"},
		{"GET", "/style.css", 200, "text/css", "body"},
		{"HEAD", "/", 200, "text/html", ""},
		{"GET", "/nothing.js", 404, "", ""},
		{"POST", "/", 405, "", ""},
	} {
		r := httptest.NewRecorder()
		h.ServeHTTP(r, httptest.NewRequest(c.method, c.path, nil))
		if r.Code != c.status {
			t.Errorf("%s %s: status %d, want %d", c.method, c.path, r.Code, c.status)
			continue
		}
		if ct := r.Header().Get("Content-Type"); !strings.HasPrefix(ct, c.contentType) {
			t.Errorf("%s %s: Content-Type %q, want %s", c.method, c.path, ct, c.contentType)
		}
		if !strings.Contains(r.Body.String(), c.body) {
			t.Errorf("%s %s: body lacks %q", c.method, c.path, c.body)
		}
		if c.status == http.StatusOK && r.Header().Get("Cache-Control") != "no-cache" {
			t.Errorf("%s %s: Cache-Control %q", c.method, c.path, r.Header().Get("Cache-Control"))
		}
	}
}

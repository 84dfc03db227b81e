// Package templates holds the site's html/template and text/template sources
// and its static assets, embedded so the certbank binary needs no files
// beside it. The generator parses them once per build.
package templates

import "embed"

// FS holds layout.html and the page templates, the text templates and
// everything under assets/ (copied to public/assets/).
//
//go:embed *.html *.tmpl assets
var FS embed.FS

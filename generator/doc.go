// Package generator compiles the YAML question sources in content/ into the
// static site in public/ and the private bank bundle: load (YAML → domain
// types, every problem reported with file:line), validate, lint, choose the
// free samples, render every output of DESIGN.md §4, and write them through
// a staging directory that replaces the output only when everything
// succeeded.
//
// YAML types never leave this package; callers see certbank types.
package generator

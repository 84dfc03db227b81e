// Package integration holds the tests that cross package boundaries: a
// realistic bank built by the generator served by several paywall instances
// on a shared store, a real certbank process killed mid-load, PostgreSQL
// going away and coming back, and nginx in front of two instances. It has no
// code of its own; its tests live here because paywall and generator never
// import each other.
package integration

// Package paywall is the certbank service: the keyed, paid and MCP endpoints
// on a gorilla/mux router, API keys and tier quotas, usage accounting with
// group commit, and the Store interface that paywall/sqlite and
// paywall/postgres implement. It reads the bank bundle that the generator
// writes; it never reads YAML.
package paywall

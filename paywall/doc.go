// Package paywall is the certbank service's HTTP doors: the route table
// (routes.go, the only importer of gorilla/mux), middleware (request ids,
// metrics, logging, panics, CORS), the one error renderer, API keys and
// their cache, signup, the keyed handlers (keyed.go) over the draw service,
// the pay-per-request door over the ledger (pay.go), the MCP door (Origin,
// key, body limit) in front of paywall/mcpserver, the static site and
// /metrics. The work behind the doors lives in its own rooms:
//
//	paywall/store      the store contract (keys, usage, the payments ledger)
//	paywall/bank       the index, pre-encoded questions, filters, pickers
//	paywall/quota      the accountant (group commit), seen sets, limits
//	paywall/draw       the one draw service behind REST and MCP
//	paywall/ledger     the payment state machine
//	paywall/mcpserver  the MCP server on the official SDK
//
// It reads the bank bundle that the generator writes; it never reads YAML.
package paywall

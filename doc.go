// Package certbank is the domain of certbank: certifications and their exam
// domains, practice questions, difficulties and option letters, API tiers,
// prices in atomic USDC units, the site settings, the bank bundle that the
// build writes and the service reads, and the error kinds every layer shares.
//
// It imports only the standard library. Adapters (YAML in generator, SQL in
// paywall/sqlite and paywall/postgres, HTTP in paywall, go-ethereum in
// paywall/x402) convert their own types to and from these at their edges.
package certbank

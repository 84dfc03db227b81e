package certbank

// Site is the site-wide configuration of content/site.yaml. It holds no
// secret: database DSNs, relayer keys and facilitator credentials come from
// flags or the environment.
type Site struct {
	Name                 string        `json:"name,omitempty"`
	Description          string        `json:"description,omitempty"`
	BaseURL              string        `json:"base_url,omitempty"`      // main site, e.g. https://certbank.example
	FunctionsURL         string        `json:"functions_url,omitempty"` // host of /functions/v1/...
	MCPURL               string        `json:"mcp_url,omitempty"`       // host of /api/mcp
	Contact              string        `json:"contact,omitempty"`
	ExamCurrencyVerified string        `json:"exam_currency_verified,omitempty"` // YYYY-MM-DD
	Quality              QualityPolicy `json:"quality,omitempty"`
	QualityMethod        string        `json:"quality_method,omitempty"` // how answers are verified, for the catalog
	QualityFormat        string        `json:"quality_format,omitempty"` // the question format, for the catalog
	FreeSampleSize       int           `json:"free_sample_size,omitempty"`
	TargetQuestions      int           `json:"target_questions,omitempty"` // questions each certification aims at (default 500)
	Pricing              Pricing       `json:"pricing,omitempty"`
	Tiers                []Tier        `json:"tiers,omitempty"`
	Payment              Payment       `json:"payment,omitempty"`
	MCPPackage           string        `json:"mcp_package,omitempty"` // npm package of a stdio MCP client, if any
}

// Payment holds the public pay-per-request settings.
type Payment struct {
	Network           string `json:"network,omitempty"` // "base" or "base-sepolia" ("base-mainnet" is an alias of "base")
	PayTo             string `json:"pay_to,omitempty"`  // recipient address
	MaxTimeoutSeconds int    `json:"max_timeout_seconds,omitempty"`
	Description       string `json:"description,omitempty"`
}

// Tier returns the tier called name.
func (s *Site) Tier(name string) (Tier, bool) {
	for _, t := range s.Tiers {
		if t.Name == name {
			return t, true
		}
	}
	return Tier{}, false
}

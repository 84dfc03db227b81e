package generator

import (
	"fmt"

	"github.com/certbank/certbank"
)

// The JSON documents of the site. Each is a typed struct so its field order,
// and so its bytes, are fixed.

type catalogDoc struct {
	Version              int              `json:"version"`
	Name                 string           `json:"name"`
	Description          string           `json:"description"`
	Site                 string           `json:"site"`
	Generated            string           `json:"generated"`
	TotalQuestions       int              `json:"total_questions"`
	TotalCertifications  int              `json:"total_certifications"`
	ExamCurrencyVerified string           `json:"exam_currency_verified"`
	Quality              catalogQuality   `json:"quality"`
	Access               catalogAccess    `json:"access"`
	PricingX402          []catalogPrice   `json:"pricing_x402"`
	Contact              string           `json:"contact"`
	Certifications       []catalogCertDoc `json:"certifications"`
}

type catalogQuality struct {
	Verified bool   `json:"verified"`
	Method   string `json:"method"`
	Format   string `json:"format"`
}

type catalogAccess struct {
	FreeSamples string        `json:"free_samples"`
	Rest        catalogRest   `json:"rest"`
	X402        catalogX402   `json:"x402"`
	MCP         catalogMCPRef `json:"mcp"`
}

type catalogRest struct {
	Endpoint string `json:"endpoint"`
	Auth     string `json:"auth"`
	Signup   string `json:"signup"`
	List     string `json:"list"`
}

type catalogX402 struct {
	Endpoint  string `json:"endpoint"`
	Protocol  string `json:"protocol"`
	Discovery string `json:"discovery"`
}

type catalogMCPRef struct {
	Endpoint string `json:"endpoint"`
	Card     string `json:"card"`
	NPM      string `json:"npm"`
}

// catalogPrice is a price entry, or the one note entry (Note set, the rest
// omitted).
type catalogPrice struct {
	Questions int    `json:"questions,omitempty"`
	PriceUSDC string `json:"price_usdc,omitempty"`
	Note      string `json:"note,omitempty"`
}

type catalogCertDoc struct {
	Slug       string        `json:"slug"`
	Name       string        `json:"name"`
	Provider   string        `json:"provider"`
	Questions  int           `json:"questions"`
	Difficulty difficultyDoc `json:"difficulty"`
	Domains    int           `json:"domains"`
	ExamStatus string        `json:"exam_status"`
	FreeSample string        `json:"free_sample"`
	StudyHub   string        `json:"study_hub"`
	PaidRest   string        `json:"paid_rest"`
	PaidX402   string        `json:"paid_x402"`
	// PaidOffers are the limit × difficulty combinations the paid route
	// can fill for this certification (it answers 402 for exactly these and
	// 400 for the rest); PaidOffersNote names the rest, and is absent when
	// every combination of the price list can be filled.
	PaidOffers     []certbank.Offer `json:"paid_offers"`
	PaidOffersNote string           `json:"paid_offers_note,omitempty"`
	ExamNote       string           `json:"exam_note,omitempty"`
	// Calibrated counts the published questions whose difficulty was
	// measured from learners' answers (certbank items apply).
	Calibrated int `json:"calibrated_questions,omitempty"`
}

type difficultyDoc struct {
	Easy   int `json:"easy"`
	Medium int `json:"medium"`
	Hard   int `json:"hard"`
}

func qualityOf(m *model) catalogQuality {
	n := m.Site.Quality.MinAgreeingSolvers
	q := catalogQuality{Format: m.Site.QualityFormat}
	if q.Format == "" {
		q.Format = "single best answer, options A-D"
	}
	switch {
	case m.Total == 0:
		q.Method = "no questions are published yet"
	case n >= 2:
		q.Verified = true
		q.Method = fmt.Sprintf("every published answer was chosen by at least %d independent solvers who did not see it, with no unresolved disagreement (%d of %d authored questions published)", n, m.Total, m.Authored)
	case n == 1:
		q.Method = fmt.Sprintf("every published answer was confirmed by one solver who did not see it (%d of %d authored questions published); not independently cross-checked", m.Total, m.Authored)
	default:
		q.Method = fmt.Sprintf("answers are published without solver verification (quality.min_agreeing_solvers is 0); %d questions", m.Total)
	}
	if m.Site.QualityMethod != "" && q.Verified {
		q.Method = m.Site.QualityMethod + ": " + q.Method
	}
	return q
}

func catalog(m *model) catalogDoc {
	s := m.Site
	d := catalogDoc{
		Version:              1,
		Name:                 s.Name,
		Description:          s.Description,
		Site:                 s.BaseURL,
		Generated:            m.Date,
		TotalQuestions:       m.Total,
		TotalCertifications:  len(m.Certs),
		ExamCurrencyVerified: s.ExamCurrencyVerified,
		Quality:              qualityOf(m),
		Access: catalogAccess{
			FreeSamples: s.BaseURL + "/api/{slug}/questions-free.json",
			Rest: catalogRest{
				Endpoint: s.FunctionsURL + certbank.PathFnQuestions,
				Auth:     "x-api-key header",
				Signup:   s.BaseURL + certbank.PathSignup,
				List:     s.FunctionsURL + certbank.PathFnCertifications,
			},
			X402: catalogX402{
				Endpoint:  s.BaseURL + certbank.PathX402,
				Protocol:  fmt.Sprintf("x402 v1 and v2, scheme exact, USDC on %s (%s)", networkTitle(m.Network), m.Network.CAIP2),
				Discovery: s.BaseURL + "/.well-known/x402.json",
			},
			MCP: catalogMCPRef{
				Endpoint: s.MCPURL + certbank.PathMCP,
				Card:     s.BaseURL + "/.well-known/mcp/server-card.json",
				NPM:      s.MCPPackage,
			},
		},
		Contact: s.Contact,
	}
	for _, e := range s.Pricing.Entries {
		d.PricingX402 = append(d.PricingX402, catalogPrice{Questions: e.Questions, PriceUSDC: e.Amount.String()})
	}
	d.PricingX402 = append(d.PricingX402, catalogPrice{Note: discountNote(s.Pricing)})
	for _, c := range m.Certs {
		e := catalogCertDoc{
			Slug:       c.Cert.Slug,
			Name:       c.Cert.Name,
			Provider:   c.Cert.Provider,
			Questions:  len(c.Published),
			Difficulty: difficultyDoc{c.ByDiff[certbank.Easy], c.ByDiff[certbank.Medium], c.ByDiff[certbank.Hard]},
			Domains:    len(c.Cert.Domains),
			ExamStatus: string(c.Cert.Status),
			FreeSample: c.FeedURL,
			StudyHub:   c.HubURL,
			PaidRest:   c.RestURL,
			PaidX402:   c.X402URL,
			PaidOffers: c.Offers,
		}
		for _, q := range c.Published {
			if q.Measured != nil {
				e.Calibrated++
			}
		}
		e.PaidOffersNote = c.OffersNote
		if c.Cert.Status == certbank.Retiring {
			e.ExamNote = c.Cert.ExamNote
		}
		d.Certifications = append(d.Certifications, e)
	}
	return d
}

func discountNote(p certbank.Pricing) string {
	s := fmt.Sprintf("%d%% discount when include_answer=false:", p.NoAnswerDiscountPercent)
	for i, e := range p.Entries {
		a, _ := p.Price(e.Questions, false)
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %d questions %s USDC", e.Questions, a)
	}
	return s
}

func networkTitle(n certbank.Network) string {
	switch n.Name {
	case "base":
		return "Base mainnet"
	case "base-sepolia":
		return "Base Sepolia"
	}
	return n.Name
}

// feedDoc is the free sample feed of one certification.
type feedDoc struct {
	Certification feedCert       `json:"certification"`
	Generated     string         `json:"generated"`
	Count         int            `json:"count"`
	Questions     []feedQuestion `json:"questions"`
	More          feedMore       `json:"more"`
}

type feedCert struct {
	Slug       string `json:"slug"`
	Name       string `json:"name"`
	Provider   string `json:"provider"`
	ExamCode   string `json:"exam_code,omitempty"`
	ExamStatus string `json:"exam_status"`
	ExamNote   string `json:"exam_note,omitempty"`
	StudyHub   string `json:"study_hub"`
}

type feedQuestion struct {
	ID          string            `json:"id"`
	Question    string            `json:"question"`
	Options     map[string]string `json:"options"`
	Difficulty  string            `json:"difficulty"`
	Domain      string            `json:"domain"`
	Answer      string            `json:"answer"`
	Explanation string            `json:"explanation"`
	References  []string          `json:"references,omitempty"`
	// Calibrated is set when the difficulty was measured from learners'
	// answers (certbank items apply) rather than only rated.
	Calibrated bool `json:"calibrated,omitempty"`
}

type feedMore struct {
	TotalQuestions int    `json:"total_questions"`
	Rest           string `json:"rest"`
	X402           string `json:"x402"`
	MCP            string `json:"mcp"`
}

func optionsMap(o certbank.Options) map[string]string {
	return map[string]string{"A": o[0], "B": o[1], "C": o[2], "D": o[3]}
}

func feed(m *model, c *certStats) feedDoc {
	d := feedDoc{
		Certification: feedCert{
			Slug: c.Cert.Slug, Name: c.Cert.Name, Provider: c.Cert.Provider, ExamCode: c.Cert.ExamCode,
			ExamStatus: string(c.Cert.Status), StudyHub: c.HubURL,
		},
		Generated: m.Date,
		Count:     len(c.Sample),
		Questions: []feedQuestion{},
		More: feedMore{
			TotalQuestions: len(c.Published),
			Rest:           c.RestURL,
			X402:           c.X402URL,
			MCP:            m.Site.MCPURL + certbank.PathMCP,
		},
	}
	if c.Cert.Status == certbank.Retiring {
		d.Certification.ExamNote = c.Cert.ExamNote
	}
	for _, q := range c.Sample {
		d.Questions = append(d.Questions, feedQuestion{
			ID: q.ID, Question: q.Stem, Options: optionsMap(q.Options), Difficulty: string(q.Difficulty),
			Domain: q.Domain, Answer: string(q.Answer), Explanation: q.Explanation, References: q.References,
			Calibrated: q.Measured != nil,
		})
	}
	return d
}

// x402Discovery is /.well-known/x402.json: a manifest of the paid
// resources (non-standard; x402 has no official well-known document).
type x402Discovery struct {
	Version      int            `json:"version"`
	Note         string         `json:"note"`
	Resources    []x402Resource `json:"resources"`
	OpenAPI      string         `json:"openapi"`
	Instructions string         `json:"instructions"`
	Ownership    []string       `json:"ownershipProofs"`
}

type x402Resource struct {
	Resource     string       `json:"resource"`
	Method       string       `json:"method"`
	Description  string       `json:"description"`
	MimeType     string       `json:"mimeType"`
	X402Versions []int        `json:"x402Versions"`
	Scheme       string       `json:"scheme"`
	Network      string       `json:"network"`
	NetworkV2    string       `json:"networkV2"`
	Asset        string       `json:"asset"`
	AssetName    string       `json:"assetName"`
	PayTo        string       `json:"payTo"`
	MaxTimeout   int          `json:"maxTimeoutSeconds"`
	Parameters   []x402Param  `json:"parameters"`
	Prices       []x402Amount `json:"prices"`
	// Offers says, per certification, which limit × difficulty
	// combinations the resource can fill: it answers 402 for exactly these
	// and 400 for the rest.
	Offers []certOffers `json:"offers"`
}

// certOffers is what one certification's paid requests can be: the offers
// it can fill and, when some of the price list cannot be, a note naming
// them. The OpenAPI schema CertificationOffers describes it.
type certOffers struct {
	Certification string           `json:"certification"`
	Offers        []certbank.Offer `json:"offers"`
	Note          string           `json:"note,omitempty"`
}

// offersOf lists every certification's offers in catalog order.
func offersOf(m *model) []certOffers {
	out := make([]certOffers, len(m.Certs))
	for i, c := range m.Certs {
		out[i] = certOffers{Certification: c.Cert.Slug, Offers: c.Offers, Note: c.OffersNote}
	}
	return out
}

type x402Param struct {
	Name     string   `json:"name"`
	Required bool     `json:"required"`
	Values   []string `json:"values,omitempty"`
	Default  string   `json:"default,omitempty"`
}

type x402Amount struct {
	Questions     int    `json:"questions"`
	IncludeAnswer bool   `json:"include_answer"`
	Amount        string `json:"amount"`
	PriceUSDC     string `json:"price_usdc"`
}

func x402Doc(m *model) x402Discovery {
	s := m.Site
	slugs := make([]string, len(m.Certs))
	for i, c := range m.Certs {
		slugs[i] = c.Cert.Slug
	}
	limits := make([]string, len(s.Pricing.Entries))
	var prices []x402Amount
	for i, e := range s.Pricing.Entries {
		limits[i] = fmt.Sprint(e.Questions)
		for _, inc := range []bool{true, false} {
			a, _ := s.Pricing.Price(e.Questions, inc)
			prices = append(prices, x402Amount{Questions: e.Questions, IncludeAnswer: inc, Amount: a.Atomic(), PriceUSDC: a.String()})
		}
	}
	return x402Discovery{
		Version: 1,
		Note:    "certbank's manifest of its x402 resources; x402 defines no official well-known document. The 402 response of each resource is authoritative.",
		Resources: []x402Resource{{
			Resource:     s.BaseURL + certbank.PathX402,
			Method:       "GET",
			Description:  "Randomized IT certification practice questions (single best answer, A-D) for one certification.",
			MimeType:     "application/json",
			X402Versions: []int{1, 2},
			Scheme:       "exact",
			Network:      m.Network.Name,
			NetworkV2:    m.Network.CAIP2,
			Asset:        m.Network.Asset,
			AssetName:    m.Network.TokenName,
			PayTo:        s.Payment.PayTo,
			MaxTimeout:   s.Payment.MaxTimeoutSeconds,
			Parameters: []x402Param{
				{Name: "certification", Required: true, Values: slugs},
				{Name: "limit", Required: true, Values: limits},
				{Name: "difficulty", Values: []string{"easy", "medium", "hard"}},
				{Name: "include_answer", Values: []string{"true", "false"}, Default: "false"},
			},
			Prices: prices,
			Offers: offersOf(m),
		}},
		OpenAPI:      s.BaseURL + "/openapi.json",
		Instructions: "Pick a combination of limit and difficulty that offers lists for the certification (difficulty any: leave the parameter out); others answer 400 before any payment. GET the resource without payment to receive HTTP 402 with the payment requirements (v1 JSON body and v2 PAYMENT-REQUIRED header). Sign an EIP-3009 transferWithAuthorization for the exact amount and retry the identical request with X-PAYMENT (v1) or PAYMENT-SIGNATURE (v2).",
		Ownership:    []string{},
	}
}

package generator

// The MCP server card. The tool, resource and prompt names here are the
// ones paywall registers; a paywall test compares them with the live server
// so the two cannot drift.

type serverCard struct {
	Schema         string       `json:"$schema"`
	Name           string       `json:"name"`
	Version        string       `json:"version"`
	Title          string       `json:"title"`
	Description    string       `json:"description"`
	WebsiteURL     string       `json:"websiteUrl"`
	Remotes        []cardRemote `json:"remotes"`
	ServerInfo     cardInfo     `json:"serverInfo"`
	Authentication cardAuth     `json:"authentication"`
	Tools          []cardTool   `json:"tools"`
	Resources      []cardItem   `json:"resources"`
	Prompts        []cardItem   `json:"prompts"`
}

type cardRemote struct {
	Type                      string       `json:"type"`
	URL                       string       `json:"url"`
	Headers                   []cardHeader `json:"headers"`
	SupportedProtocolVersions []string     `json:"supportedProtocolVersions"`
}

type cardHeader struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
	IsSecret    bool   `json:"isSecret"`
}

type cardInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type cardAuth struct {
	Required bool     `json:"required"`
	Schemes  []string `json:"schemes"`
	Note     string   `json:"note"`
}

type cardTool struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"readOnlyHint"`
}

type cardItem struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// MCPTools describes the MCP tools; paywall's MCP server uses the same
// names and descriptions.
var MCPTools = []cardTool{
	{Name: "list_certifications", Title: "List certifications", ReadOnly: true,
		Description: "Lists the IT certifications in the bank with slug, name, provider, question counts, exam status and retirement note. Optional provider filter (e.g. VendorFour). Use the slug with the other tools."},
	{Name: "get_exam_blueprint", Title: "Get exam blueprint", ReadOnly: true,
		Description: "Returns one certification's exam blueprint: its domains with their weights and question counts, the difficulty mix, exam length and number of questions."},
	{Name: "get_practice_questions", Title: "Get practice questions", ReadOnly: true,
		Description: "Returns practice questions (single best answer, options A-D) for one certification, optionally filtered by difficulty and domain. Answers are withheld unless include_answers is true; grade a learner's choice with check_answer. Without an x-api-key header only the free sample is used; with a key, the whole bank under the key's tier quota."},
	{Name: "check_answer", Title: "Check an answer", ReadOnly: true,
		Description: "Grades a chosen option letter for a question id: whether it is correct, the correct letter, and the explanation of every option."},
}

// MCPPrompts and MCPResources describe the MCP prompts and resources.
var (
	MCPPrompts   = []cardItem{{Name: "quiz_me", Description: "Guides the assistant through a short quiz on one certification: one question at a time, graded with check_answer, then a summary of weak domains."}}
	MCPResources = []cardItem{{Name: "certbank://certifications/{slug}", Description: "One certification as JSON: exam facts, domains with weights, question counts."}}
)

// MCPProtocolVersions are the MCP revisions the endpoint accepts.
var MCPProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}

func card(m *model) serverCard {
	return serverCard{
		Schema:      "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
		Name:        "io.github.certbank/certbank",
		Version:     "1.0.0",
		Title:       m.Site.Name,
		Description: "IT certification practice questions: list exams, draw questions, check answers.",
		WebsiteURL:  m.Site.BaseURL + "/",
		Remotes: []cardRemote{{
			Type: "streamable-http",
			URL:  m.Site.MCPURL + "/api/mcp",
			Headers: []cardHeader{{
				Name:        "x-api-key",
				Description: "Optional certbank API key (POST " + m.Site.BaseURL + "/api/v1/signup). Without it, questions come from the free samples only.",
				IsRequired:  false,
				IsSecret:    true,
			}},
			SupportedProtocolVersions: MCPProtocolVersions,
		}},
		ServerInfo: cardInfo{Name: "certbank", Version: "1.0.0"},
		Authentication: cardAuth{
			Required: false,
			Schemes:  []string{"x-api-key"},
			Note:     "No key: free sample questions. An x-api-key header: the whole bank, counted against the key's tier like the REST API.",
		},
		Tools:     MCPTools,
		Resources: MCPResources,
		Prompts:   MCPPrompts,
	}
}

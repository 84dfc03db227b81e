package generator

// The MCP server card. Its tools, resources, prompts and protocol versions
// come from the domain package (certbank.MCPTools…), which
// paywall/mcpserver registers too, so the two cannot drift.

import "github.com/certbank/certbank"

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

// cardLists converts the domain's MCP contracts to the card's shapes.
func cardLists() (tools []cardTool, resources, prompts []cardItem) {
	for _, t := range certbank.MCPTools() {
		tools = append(tools, cardTool{Name: t.Name, Title: t.Title, Description: t.Description, ReadOnly: !t.Writes})
	}
	for _, r := range certbank.MCPResources() {
		resources = append(resources, cardItem{Name: r.Name, Description: r.Description})
	}
	for _, p := range certbank.MCPPrompts() {
		prompts = append(prompts, cardItem{Name: p.Name, Description: p.Description})
	}
	return tools, resources, prompts
}

func card(m *model) serverCard {
	tools, resources, prompts := cardLists()
	return serverCard{
		Schema:      "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
		Name:        "io.github.certbank/certbank",
		Version:     certbank.MCPServerVersion,
		Title:       m.Site.Name,
		Description: "IT certification practice questions: list exams, draw questions, check answers.",
		WebsiteURL:  m.Site.BaseURL + "/",
		Remotes: []cardRemote{{
			Type: "streamable-http",
			URL:  m.Site.MCPURL + certbank.PathMCP,
			Headers: []cardHeader{{
				Name:        "x-api-key",
				Description: "Optional certbank API key (POST " + m.Site.BaseURL + certbank.PathSignup + "). Without it, questions come from the free samples only.",
				IsRequired:  false,
				IsSecret:    true,
			}},
			SupportedProtocolVersions: certbank.MCPProtocolVersions(),
		}},
		ServerInfo: cardInfo{Name: certbank.MCPServerName, Version: certbank.MCPServerVersion},
		Authentication: cardAuth{
			Required: false,
			Schemes:  []string{"x-api-key"},
			Note:     "No key: free sample questions. An x-api-key header: the whole bank, counted against the key's tier like the REST API.",
		},
		Tools:     tools,
		Resources: resources,
		Prompts:   prompts,
	}
}

// mcpTools is the card's tool list.
func mcpTools() []cardTool {
	tools, _, _ := cardLists()
	return tools
}

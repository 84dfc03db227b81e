package certbank

// The contracts that both the build (generator: server card, OpenAPI,
// documents) and the service (paywall, paywall/mcpserver) publish, written
// once.

// Paths of the service's dynamic endpoints.
const (
	PathQuestions          = "/api/v1/questions"
	PathCertifications     = "/api/v1/certifications"
	PathUsage              = "/api/v1/usage"
	PathExport             = "/api/v1/export"
	PathSignup             = "/api/v1/signup"
	PathExam               = "/api/v1/exam"
	PathExamAnswers        = "/api/v1/exam/{id}/answers"
	PathAnswers            = "/api/v1/answers"
	PathReports            = "/api/v1/reports"
	PathX402               = "/api/v1/x402"
	PathFnQuestions        = "/functions/v1/api-v1-questions"
	PathFnCertifications   = "/functions/v1/api-v1-certifications"
	PathFnUsage            = "/functions/v1/api-v1-usage"
	PathMCP                = "/api/mcp"
	PathMCPServerCard      = "/api/mcp/server-card"
	PathWellKnownMCPCard   = "/.well-known/mcp/server-card.json"
	PathHealth             = "/healthz"
	PathReady              = "/readyz"
	PathMetrics            = "/metrics"
	MediaTypeMCPServerCard = "application/mcp-server-card+json"
)

// APIPaths returns the dynamic endpoints an API description (OpenAPI)
// documents: the keyed, paid, signup and MCP routes on both hosts. (The
// server card is a discovery document, and /healthz, /readyz and /metrics
// are for operators.)
func APIPaths() []string {
	return []string{PathQuestions, PathCertifications, PathUsage, PathExport, PathSignup, PathX402,
		PathFnQuestions, PathFnCertifications, PathFnUsage, PathMCP, PathExam, PathExamAnswers, PathAnswers, PathReports}
}

// OperatorPaths returns the service's paths that are not part of its API:
// the server card on its two paths and the operators' endpoints.
func OperatorPaths() []string {
	return []string{PathMCPServerCard, PathWellKnownMCPCard, PathHealth, PathReady, PathMetrics}
}

// MCPTool describes one MCP tool as the server card and the server list it.
type MCPTool struct {
	Name, Title, Description string
	// Idempotent: the same arguments give the same answer (every tool
	// but the random draw and the mock exam's).
	Idempotent bool
	// Writes: the tool stores something (a mock exam, its grading, a
	// report); the others only read.
	Writes bool
}

// MCPItem describes an MCP prompt or resource (template).
type MCPItem struct {
	Name, Description string
}

// MCP tool, prompt and resource names.
const (
	ToolListCertifications   = "list_certifications"
	ToolGetExamBlueprint     = "get_exam_blueprint"
	ToolGetPracticeQuestions = "get_practice_questions"
	ToolCheckAnswer          = "check_answer"
	ToolStartMockExam        = "start_mock_exam"
	ToolSubmitMockExam       = "submit_mock_exam"
	ToolReportQuestion       = "report_question"
	PromptQuizMe             = "quiz_me"
	ResourceCertification    = "certbank://certifications/{slug}"
	MCPServerName            = "certbank"
	MCPServerVersion         = "1.0.0"
)

// MCPTools returns the MCP tools.
func MCPTools() []MCPTool {
	return []MCPTool{
		{Name: ToolListCertifications, Title: "List certifications", Idempotent: true,
			Description: "Lists the IT certifications in the bank with slug, name, provider, question counts, exam status and retirement note. Optional provider filter (e.g. VendorFour). Use the slug with the other tools."},
		{Name: ToolGetExamBlueprint, Title: "Get exam blueprint", Idempotent: true,
			Description: "Returns one certification's exam blueprint: its domains with their weights and question counts, the difficulty mix, exam length and number of questions."},
		{Name: ToolGetPracticeQuestions, Title: "Get practice questions",
			Description: "Returns practice questions (single best answer, options A-D) for one certification, optionally filtered by difficulty and domain. Answers are withheld unless include_answers is true; grade a learner's choice with check_answer. Without an x-api-key header only the free sample is used; with a key, the whole bank under the key's tier quota."},
		{Name: ToolCheckAnswer, Title: "Check an answer", Idempotent: true,
			Description: "Grades a chosen option letter for a question id: whether it is correct, the correct letter, and the explanation of every option."},
		{Name: ToolStartMockExam, Title: "Start a mock exam", Writes: true,
			Description: "Draws a timed mock exam for one certification, full or half length, weighted by the exam blueprint's domains, questions without answers. Returns an exam_id; grade it once with submit_mock_exam. Without an x-api-key header it draws on the free sample; with a key, on the whole bank, counted against the key's tier (a full exam needs a tier whose unique-question allowance holds it)."},
		{Name: ToolSubmitMockExam, Title: "Submit a mock exam", Writes: true,
			Description: "Grades a mock exam once: answers maps question ids to letters A-D (unanswered questions count as wrong). Returns the score, the score by domain and by difficulty, and every question with the correct letter and explanation."},
		{Name: ToolReportQuestion, Title: "Report a question", Writes: true,
			Description: "Reports a question believed wrong to the operators: reason is wrong_key, ambiguous, outdated, typo or other, with an optional text of up to 1,000 characters. Nothing personal is stored."},
	}
}

// LookupMCPTool returns the tool called name.
func LookupMCPTool(name string) (MCPTool, bool) {
	for _, t := range MCPTools() {
		if t.Name == name {
			return t, true
		}
	}
	return MCPTool{}, false
}

// MCPPrompts returns the MCP prompts.
func MCPPrompts() []MCPItem {
	return []MCPItem{{Name: PromptQuizMe, Description: "Guides the assistant through a short quiz on one certification: one question at a time, graded with check_answer, then a summary of weak domains."}}
}

// MCPResources returns the MCP resource templates.
func MCPResources() []MCPItem {
	return []MCPItem{{Name: ResourceCertification, Description: "One certification as JSON: exam facts, domains with weights, question counts."}}
}

// MCPProtocolVersions returns the MCP revisions the endpoint accepts,
// newest first: what the server card lists and server/discover reports.
func MCPProtocolVersions() []string {
	return []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}
}

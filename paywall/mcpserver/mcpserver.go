// Package mcpserver is the MCP server on the official Go SDK: the tools
// (list_certifications, get_exam_blueprint, get_practice_questions,
// check_answer), the certifications as resources and the quiz_me prompt,
// served statelessly over Streamable HTTP with JSON responses, so any
// instance can answer any request. Without a key (paywall's MCP door puts
// the authenticated one in the context, see draw.WithKey) the tools draw
// only on the free samples; with one, on the whole bank through the same
// draw service and accounting as the REST route. The names and
// descriptions come from the domain package, which the server card uses
// too. It is the only importer of the MCP SDK.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/bank"
	"github.com/certbank/certbank/paywall/draw"
	"github.com/certbank/certbank/paywall/learn"
	"github.com/certbank/certbank/paywall/quota"
	"github.com/certbank/certbank/paywall/store"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Config is what the MCP server needs.
type Config struct {
	Draw *draw.Service
	// Learn runs mock exams, records graded answers and takes reports.
	Learn  *learn.Service
	Logger *slog.Logger
	// Rejected, if set, is told the kind of each request a limit refused
	// (for metrics).
	Rejected func(kind certbank.Code)
	// MaxBody bounds a request body.
	MaxBody int64
	// TrustProxy: behind a same-host proxy the Host header is not
	// loopback, so the SDK's DNS-rebinding guard is off.
	TrustProxy bool
}

// New returns the MCP endpoint's handler.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &server{cfg: cfg, draw: cfg.Draw, ix: cfg.Draw.Index()}
	srv := s.newMCPServer()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		MaxRequestBodyBytes:        cfg.MaxBody,
		DisableLocalhostProtection: cfg.TrustProxy,
	})
}

type server struct {
	cfg  Config
	draw *draw.Service
	ix   *bank.Index
}

// Implementation is the server's identity in initialize and server/discover.
func (s *server) implementation() *mcp.Implementation {
	return &mcp.Implementation{Name: certbank.MCPServerName, Title: s.ix.Bank().Site.Name, Version: certbank.MCPServerVersion}
}

type listCertsIn struct {
	Provider string `json:"provider,omitempty" jsonschema:"only certifications of this provider, e.g. VendorFour or CloudOne"`
}

type certSummary struct {
	Slug          string `json:"slug"`
	Name          string `json:"name"`
	Provider      string `json:"provider"`
	ExamCode      string `json:"exam_code,omitempty"`
	ExamStatus    string `json:"exam_status" jsonschema:"current or retiring"`
	ExamNote      string `json:"exam_note,omitempty" jsonschema:"for retiring exams: the retirement date and successor"`
	Questions     int    `json:"questions" jsonschema:"verified questions in the bank"`
	FreeQuestions int    `json:"free_questions" jsonschema:"questions available without an API key"`
}

type listCertsOut struct {
	Certifications []certSummary `json:"certifications"`
}

type blueprintIn struct {
	Certification string `json:"certification" jsonschema:"certification slug from list_certifications, e.g. vendorfour-security-plus"`
}

type blueprintDomain struct {
	Name       string               `json:"name"`
	Weight     int                  `json:"weight" jsonschema:"percent of the exam"`
	Questions  int                  `json:"questions" jsonschema:"questions in the bank for this domain"`
	Objectives []blueprintObjective `json:"objectives" jsonschema:"the exam guide's objectives of this domain"`
}

type blueprintObjective struct {
	Code      string `json:"code" jsonschema:"the objective's number in the exam guide"`
	Name      string `json:"name"`
	Questions int    `json:"questions" jsonschema:"questions in the bank for this objective"`
}

type blueprintOut struct {
	Slug          string            `json:"slug"`
	Name          string            `json:"name"`
	Provider      string            `json:"provider"`
	ExamCode      string            `json:"exam_code,omitempty"`
	ExamStatus    string            `json:"exam_status"`
	ExamNote      string            `json:"exam_note,omitempty"`
	ExamMinutes   int               `json:"exam_minutes"`
	ExamQuestions int               `json:"exam_questions"`
	PassingScore  string            `json:"passing_score,omitempty"`
	Domains       []blueprintDomain `json:"domains"`
	Difficulty    map[string]int    `json:"difficulty" jsonschema:"questions in the bank by difficulty"`
}

type practiceIn struct {
	Certification  string `json:"certification" jsonschema:"certification slug from list_certifications"`
	Difficulty     string `json:"difficulty,omitempty" jsonschema:"easy, medium or hard"`
	Domain         string `json:"domain,omitempty" jsonschema:"exam domain name from get_exam_blueprint"`
	Count          *int   `json:"count,omitempty" jsonschema:"how many questions, 1 to 10 without a key or up to the key's tier maximum; default 5"`
	IncludeAnswers bool   `json:"include_answers,omitempty" jsonschema:"include the correct letter and explanation; default false (use check_answer to grade)"`
}

type mcpQuestion struct {
	ID          string            `json:"id"`
	Question    string            `json:"question"`
	Options     map[string]string `json:"options"`
	Difficulty  string            `json:"difficulty"`
	Domain      string            `json:"domain"`
	Answer      string            `json:"answer,omitempty"`
	Explanation string            `json:"explanation,omitempty"`
}

type practiceOut struct {
	Certification   string        `json:"certification"`
	Source          string        `json:"source" jsonschema:"free_sample without an API key, bank with one"`
	TotalAvailable  int           `json:"total_available"`
	Returned        int           `json:"returned"`
	Questions       []mcpQuestion `json:"questions"`
	UniqueQuestions *draw.Unique  `json:"unique_questions,omitempty"`
}

type checkIn struct {
	QuestionID string `json:"question_id" jsonschema:"id of a question from get_practice_questions"`
	Answer     string `json:"answer" jsonschema:"the chosen option letter: A, B, C or D"`
}

type checkOut struct {
	QuestionID    string `json:"question_id"`
	Chosen        string `json:"chosen"`
	Correct       bool   `json:"correct"`
	CorrectAnswer string `json:"correct_answer"`
	Explanation   string `json:"explanation"`
}

// toolErr is a tool execution error: the model sees the message and can
// correct its arguments.
func toolErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

func (s *server) newMCPServer() *mcp.Server {
	srv := mcp.NewServer(s.implementation(), &mcp.ServerOptions{
		SupportedProtocolVersions: certbank.MCPProtocolVersions(), // what the server card lists
		Instructions:              "certbank serves IT certification practice questions. Call list_certifications to find a slug, get_practice_questions to draw questions (answers withheld by default), and check_answer to grade a learner's choice. For a timed, blueprint-weighted practice exam call start_mock_exam, then submit_mock_exam with all the answers; report_question tells the operators about a question that looks wrong.",
	})
	tool := func(name string) *mcp.Tool {
		t, _ := certbank.LookupMCPTool(name)
		f := false
		return &mcp.Tool{Name: name, Title: t.Title, Description: t.Description,
			Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: !t.Writes, IdempotentHint: t.Idempotent, OpenWorldHint: &f}}
	}
	mcp.AddTool(srv, tool(certbank.ToolListCertifications), func(ctx context.Context, _ *mcp.CallToolRequest, in listCertsIn) (*mcp.CallToolResult, listCertsOut, error) {
		out := listCertsOut{Certifications: []certSummary{}}
		if in.Provider != "" {
			found := false
			for _, p := range s.ix.Providers() {
				found = found || strings.EqualFold(p, in.Provider)
			}
			if !found {
				return nil, out, toolErr("unknown provider %q; use one of %s", in.Provider, strings.Join(s.ix.Providers(), ", "))
			}
		}
		for _, c := range s.ix.Certs() {
			if in.Provider != "" && !strings.EqualFold(in.Provider, c.Provider) {
				continue
			}
			cs := certSummary{Slug: c.Slug, Name: c.Name, Provider: c.Provider, ExamCode: c.ExamCode, ExamStatus: string(c.Status),
				Questions: len(s.ix.ByCert(c.Slug)), FreeQuestions: len(s.ix.Samples(c.Slug))}
			if c.Status == certbank.Retiring {
				cs.ExamNote = c.ExamNote
			}
			out.Certifications = append(out.Certifications, cs)
		}
		return nil, out, nil
	})
	mcp.AddTool(srv, tool(certbank.ToolGetExamBlueprint), func(ctx context.Context, _ *mcp.CallToolRequest, in blueprintIn) (*mcp.CallToolResult, blueprintOut, error) {
		c, ok := s.ix.Cert(in.Certification)
		if !ok {
			return nil, blueprintOut{}, toolErr("unknown certification %q; call list_certifications for the slugs", in.Certification)
		}
		return nil, s.blueprint(c), nil
	})
	mcp.AddTool(srv, tool(certbank.ToolGetPracticeQuestions), func(ctx context.Context, req *mcp.CallToolRequest, in practiceIn) (*mcp.CallToolResult, practiceOut, error) {
		out, err := s.practice(ctx, in)
		return nil, out, err
	})
	mcp.AddTool(srv, tool(certbank.ToolCheckAnswer), func(ctx context.Context, _ *mcp.CallToolRequest, in checkIn) (*mcp.CallToolResult, checkOut, error) {
		out, err := s.check(ctx, in)
		return nil, out, err
	})
	if s.cfg.Learn != nil {
		mcp.AddTool(srv, tool(certbank.ToolStartMockExam), func(ctx context.Context, _ *mcp.CallToolRequest, in startExamIn) (*mcp.CallToolResult, startExamOut, error) {
			out, err := s.startExam(ctx, in)
			return nil, out, err
		})
		mcp.AddTool(srv, tool(certbank.ToolSubmitMockExam), func(ctx context.Context, _ *mcp.CallToolRequest, in submitExamIn) (*mcp.CallToolResult, ExamReport, error) {
			out, err := s.submitExam(ctx, in)
			return nil, out, err
		})
		mcp.AddTool(srv, tool(certbank.ToolReportQuestion), func(ctx context.Context, req *mcp.CallToolRequest, in reportIn) (*mcp.CallToolResult, reportOut, error) {
			out, err := s.report(ctx, in)
			return nil, out, err
		})
	}
	for _, c := range s.ix.Certs() {
		c := c
		srv.AddResource(&mcp.Resource{URI: "certbank://certifications/" + c.Slug, Name: c.Slug, Title: c.Name, MIMEType: "application/json",
			Description: fmt.Sprintf("%s: exam facts, domains with weights, question counts", c.Name)}, s.readCertResource)
	}
	res := certbank.MCPResources()[0]
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: res.Name, Name: "certification", MIMEType: "application/json",
		Description: res.Description}, s.readCertResource)
	quiz := certbank.MCPPrompts()[0]
	srv.AddPrompt(&mcp.Prompt{Name: quiz.Name, Title: "Quiz me", Description: quiz.Description,
		Arguments: []*mcp.PromptArgument{
			{Name: "certification", Description: "certification slug, e.g. vendorfour-security-plus", Required: true},
			{Name: "count", Description: "number of questions (default 5)"},
			{Name: "difficulty", Description: "easy, medium or hard (default: mixed)"},
		}}, s.quizPrompt)
	return srv
}

func (s *server) blueprint(c *certbank.Certification) blueprintOut {
	out := blueprintOut{Slug: c.Slug, Name: c.Name, Provider: c.Provider, ExamCode: c.ExamCode, ExamStatus: string(c.Status),
		ExamMinutes: c.ExamMinutes, ExamQuestions: c.ExamQuestions, PassingScore: c.PassingScore,
		Difficulty: map[string]int{"easy": 0, "medium": 0, "hard": 0}, Domains: []blueprintDomain{}}
	if c.Status == certbank.Retiring {
		out.ExamNote = c.ExamNote
	}
	byDomain := map[string]int{}
	byObjective := map[string]int{}
	for _, e := range s.ix.ByCert(c.Slug) {
		byDomain[e.Q.Domain]++
		byObjective[e.Q.Objective]++
		out.Difficulty[string(e.Q.Difficulty)]++
	}
	for _, d := range c.Domains {
		bd := blueprintDomain{d.Name, d.Weight, byDomain[d.Name], []blueprintObjective{}}
		for _, o := range d.Objectives {
			bd.Objectives = append(bd.Objectives, blueprintObjective{o.Code, o.Name, byObjective[o.Code]})
		}
		out.Domains = append(out.Domains, bd)
	}
	return out
}

func (s *server) readCertResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	u, err := url.Parse(req.Params.URI)
	if err != nil || u.Scheme != "certbank" || u.Host != "certifications" {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	c, ok := s.ix.Cert(strings.Trim(u.Path, "/"))
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	b, _ := json.MarshalIndent(s.blueprint(c), "", "  ")
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
}

func (s *server) quizPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := req.Params.Arguments
	slug := args["certification"]
	c, ok := s.ix.Cert(slug)
	if slug == "" {
		return nil, invalidParams("certification is required: a slug from list_certifications")
	}
	if !ok {
		return nil, invalidParams("unknown certification %q; call list_certifications for the slugs", slug)
	}
	count := "5"
	if v := strings.TrimSpace(args["count"]); v != "" {
		maxCount := draw.FreeMax
		for _, t := range s.ix.Bank().Site.Tiers {
			maxCount = max(maxCount, t.MaxLimit)
		}
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > maxCount {
			return nil, invalidParams("count %q must be a whole number from 1 to %d", v, maxCount)
		}
		count = v
	}
	diff := ""
	if d := args["difficulty"]; d != "" {
		if _, err := certbank.ParseDifficulty(d); err != nil {
			return nil, invalidParams("difficulty %q must be easy, medium or hard", d)
		}
		diff = fmt.Sprintf(", difficulty %q", d)
	}
	text := fmt.Sprintf(`Quiz me on %s (%s).
1. Call get_practice_questions with certification %q, count %s%s and include_answers false.
2. Ask me the questions one at a time: show the question and options A-D, then wait for my answer.
3. Grade each answer with check_answer and tell me whether I was right, the correct letter, and the explanation in your own words.
4. At the end, give my score and list the exam domains where I missed questions, with what to review.`, c.Name, c.Slug, c.Slug, count, diff)
	return &mcp.GetPromptResult{Description: "A short quiz on " + c.Name, Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
}

func toMCPQuestion(e *bank.Entry, include bool) mcpQuestion {
	t := e.Text()
	m := mcpQuestion{ID: t.ID, Question: t.Question, Options: t.Options, Difficulty: t.Difficulty, Domain: t.Domain}
	if include {
		m.Answer, m.Explanation = string(e.Q.Answer), *t.Explanation
	}
	return m
}

// practice is get_practice_questions: the arguments are checked and the
// questions drawn (and, with a key, accounted exactly like GET
// /api/v1/questions) by the draw service. A returned error is a tool error
// whose message the caller may see.
func (s *server) practice(ctx context.Context, in practiceIn) (practiceOut, error) {
	out := practiceOut{Questions: []mcpQuestion{}}
	f, c, err := s.draw.Filter(in.Certification, in.Difficulty, in.Domain, true)
	if err != nil {
		return out, toolFilterErr(err)
	}
	out.Certification = c.Slug
	count := 5
	if in.Count != nil {
		count = *in.Count
	}
	k := draw.KeyFrom(ctx)
	res, err := s.draw.Draw(ctx, draw.Query{Key: k, Filter: f, Count: count})
	if err != nil {
		code := certbank.ErrorCode(err)
		var le *quota.LimitError
		if errors.As(err, &le) && s.cfg.Rejected != nil {
			s.cfg.Rejected(code)
		}
		if code == certbank.Internal {
			s.cfg.Logger.Error("mcp get_practice_questions failed", "err", err)
			return out, toolErr("the request could not be recorded; retry shortly")
		}
		return out, toolErr("%s", certbank.ErrorMessage(err))
	}
	out.Source, out.TotalAvailable, out.Returned = res.Source, res.Total, len(res.Picked)
	if k != nil {
		u := res.Unique
		out.UniqueQuestions = &u
	}
	for _, e := range res.Picked {
		out.Questions = append(out.Questions, toMCPQuestion(e, in.IncludeAnswers))
	}
	return out, nil
}

// toolFilterErr words a filter error for a model: where to find the
// allowed values.
func toolFilterErr(err error) error {
	var fe *draw.FilterError
	if !errors.As(err, &fe) {
		return toolErr("%s", certbank.ErrorMessage(err))
	}
	switch {
	case fe.Param == "certification" && fe.Value == "":
		return toolErr("certification is required: a slug from list_certifications")
	case fe.Param == "certification":
		return toolErr("unknown certification %q; call list_certifications for the slugs", fe.Value)
	case fe.Param == "difficulty":
		return toolErr("difficulty %q must be easy, medium or hard", fe.Value)
	case fe.Param == "domain":
		return toolErr("domain %q is not a domain of %s; call get_exam_blueprint for the names", fe.Value, fe.Cert)
	}
	return toolErr("%s", certbank.ErrorMessage(err))
}

// invalidParams is a JSON-RPC invalid-params error (-32602).
func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func (s *server) check(ctx context.Context, in checkIn) (checkOut, error) {
	l, err := certbank.ParseLetter(in.Answer)
	if err != nil {
		return checkOut{}, toolErr("answer %q must be one of A, B, C, D", in.Answer)
	}
	e, ok := s.ix.ByID(strings.TrimSpace(in.QuestionID))
	if !ok {
		return checkOut{}, toolErr("unknown question_id %q; use an id returned by get_practice_questions", in.QuestionID)
	}
	if ok, err := s.draw.MayCheck(ctx, draw.KeyFrom(ctx), e); err != nil || !ok {
		return checkOut{}, toolErr("question %s was not served to you: without an API key only free-sample questions can be checked; with a key, questions the key has been served", e.Q.ID)
	}
	if s.cfg.Learn != nil {
		// The statistics are worth less than the answer: a failure to
		// record is logged.
		if _, err := s.cfg.Learn.RecordAnswer(ctx, e, l, store.SourceMCP); err != nil {
			s.cfg.Logger.Error("mcp check_answer: the answer was not recorded for the item statistics", "err", err)
		}
	}
	return checkOut{QuestionID: e.Q.ID, Chosen: string(l), Correct: l == e.Q.Answer, CorrectAnswer: string(e.Q.Answer), Explanation: *e.Text().Explanation}, nil
}

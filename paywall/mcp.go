package paywall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/paywall/bank"
	"github.com/certbank/certbank/paywall/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP endpoint: a stateless Streamable HTTP server (official Go SDK)
// with JSON responses, so any instance can answer any request. Without an
// x-api-key header tools draw only on the free samples; with one, on the
// whole bank under the key's tier, counted exactly like the REST route.

const mcpMaxBody = 1 << 20

type mcpKeyCtx struct{}

// keyFromContext returns the API key the MCP middleware authenticated.
func keyFromContext(ctx context.Context) (store.Key, bool) {
	k, ok := ctx.Value(mcpKeyCtx{}).(store.Key)
	return k, ok
}

// Tool descriptions; the server card in the build describes the same tools
// (a test compares the two).
var mcpToolInfo = map[string]struct{ title, desc string }{
	"list_certifications":    {"List certifications", "Lists the IT certifications in the bank with slug, name, provider, question counts, exam status and retirement note. Optional provider filter (e.g. VendorFour). Use the slug with the other tools."},
	"get_exam_blueprint":     {"Get exam blueprint", "Returns one certification's exam blueprint: its domains with their weights and question counts, the difficulty mix, exam length and number of questions."},
	"get_practice_questions": {"Get practice questions", "Returns practice questions (single best answer, options A-D) for one certification, optionally filtered by difficulty and domain. Answers are withheld unless include_answers is true; grade a learner's choice with check_answer. Without an x-api-key header only the free sample is used; with a key, the whole bank under the key's tier quota."},
	"check_answer":           {"Check an answer", "Grades a chosen option letter for a question id: whether it is correct, the correct letter, and the explanation of every option."},
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
	Count          int    `json:"count,omitempty" jsonschema:"how many questions, 1 to 10 without a key or up to the key's tier maximum; default 5"`
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
	UniqueQuestions *uniqueMeta   `json:"unique_questions,omitempty"`
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

func (s *Server) newMCPServer() *mcp.Server {
	srv := mcp.NewServer(mcpImplementation(s), &mcp.ServerOptions{
		Instructions: "certbank serves IT certification practice questions. Call list_certifications to find a slug, get_practice_questions to draw questions (answers withheld by default), and check_answer to grade a learner's choice.",
	})
	ro := func(name string) *mcp.ToolAnnotations {
		f := false
		return &mcp.ToolAnnotations{Title: mcpToolInfo[name].title, ReadOnlyHint: true, IdempotentHint: name != "get_practice_questions", OpenWorldHint: &f}
	}
	tool := func(name string) *mcp.Tool {
		return &mcp.Tool{Name: name, Title: mcpToolInfo[name].title, Description: mcpToolInfo[name].desc, Annotations: ro(name)}
	}
	mcp.AddTool(srv, tool("list_certifications"), func(ctx context.Context, _ *mcp.CallToolRequest, in listCertsIn) (*mcp.CallToolResult, listCertsOut, error) {
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
	mcp.AddTool(srv, tool("get_exam_blueprint"), func(ctx context.Context, _ *mcp.CallToolRequest, in blueprintIn) (*mcp.CallToolResult, blueprintOut, error) {
		c, ok := s.ix.Cert(in.Certification)
		if !ok {
			return nil, blueprintOut{}, toolErr("unknown certification %q; call list_certifications for the slugs", in.Certification)
		}
		return nil, s.blueprint(c), nil
	})
	mcp.AddTool(srv, tool("get_practice_questions"), func(ctx context.Context, req *mcp.CallToolRequest, in practiceIn) (*mcp.CallToolResult, practiceOut, error) {
		out, err := s.mcpPractice(ctx, in)
		return nil, out, err
	})
	mcp.AddTool(srv, tool("check_answer"), func(ctx context.Context, _ *mcp.CallToolRequest, in checkIn) (*mcp.CallToolResult, checkOut, error) {
		out, err := s.mcpCheck(ctx, in)
		return nil, out, err
	})
	for _, c := range s.ix.Certs() {
		c := c
		srv.AddResource(&mcp.Resource{URI: "certbank://certifications/" + c.Slug, Name: c.Slug, Title: c.Name, MIMEType: "application/json",
			Description: fmt.Sprintf("%s: exam facts, domains with weights, question counts", c.Name)}, s.readCertResource)
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "certbank://certifications/{slug}", Name: "certification", MIMEType: "application/json",
		Description: "One certification as JSON: exam facts, domains with weights, question counts."}, s.readCertResource)
	srv.AddPrompt(&mcp.Prompt{Name: "quiz_me", Title: "Quiz me", Description: "Guides the assistant through a short quiz on one certification: one question at a time, graded with check_answer, then a summary of weak domains.",
		Arguments: []*mcp.PromptArgument{
			{Name: "certification", Description: "certification slug, e.g. vendorfour-security-plus", Required: true},
			{Name: "count", Description: "number of questions (default 5)"},
			{Name: "difficulty", Description: "easy, medium or hard (default: mixed)"},
		}}, s.quizPrompt)
	return srv
}

func (s *Server) blueprint(c *certbank.Certification) blueprintOut {
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

func (s *Server) readCertResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
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

func (s *Server) quizPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := req.Params.Arguments
	slug := args["certification"]
	c, ok := s.ix.Cert(slug)
	if !ok {
		return nil, fmt.Errorf("unknown certification %q; call list_certifications for the slugs", slug)
	}
	count := "5"
	if v := strings.TrimSpace(args["count"]); v != "" {
		maxCount := 10
		for _, t := range s.cfg.Bank.Site.Tiers {
			maxCount = max(maxCount, t.MaxLimit)
		}
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > maxCount {
			return nil, fmt.Errorf("count %q must be a whole number from 1 to %d", v, maxCount)
		}
		count = v
	}
	diff := ""
	if d := args["difficulty"]; d != "" {
		if _, err := certbank.ParseDifficulty(d); err != nil {
			return nil, err
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

func (s *Server) mcpPractice(ctx context.Context, in practiceIn) (practiceOut, error) {
	out, picked, err := s.mcpDraw(ctx, in)
	if err != nil {
		return out, err
	}
	for _, e := range picked {
		out.Questions = append(out.Questions, toMCPQuestion(e, in.IncludeAnswers))
	}
	return out, nil
}

// mcpDraw checks get_practice_questions' arguments, draws the questions and
// (with a key) accounts the request exactly like GET /api/v1/questions. It
// fills out's fields except Questions. A returned error is a tool error
// whose message the caller may see.
func (s *Server) mcpDraw(ctx context.Context, in practiceIn) (practiceOut, []*bank.Entry, error) {
	out := practiceOut{Questions: []mcpQuestion{}}
	c, ok := s.ix.Cert(in.Certification)
	if !ok {
		return out, nil, toolErr("unknown certification %q; call list_certifications for the slugs", in.Certification)
	}
	out.Certification = c.Slug
	var diff certbank.Difficulty
	if in.Difficulty != "" {
		d, err := certbank.ParseDifficulty(strings.ToLower(in.Difficulty))
		if err != nil {
			return out, nil, toolErr("difficulty %q must be easy, medium or hard", in.Difficulty)
		}
		diff = d
	}
	domain := ""
	if in.Domain != "" {
		for _, d := range c.Domains {
			if strings.EqualFold(d.Name, in.Domain) {
				domain = d.Name
			}
		}
		if domain == "" {
			return out, nil, toolErr("domain %q is not a domain of %s; call get_exam_blueprint for the names", in.Domain, c.Slug)
		}
	}
	count := in.Count
	if count == 0 {
		count = 5
	}
	k, keyed := keyFromContext(ctx)
	f := bank.Filter{Cert: c.Slug, Difficulty: diff, Domain: domain}
	if !keyed {
		if count < 1 || count > 10 {
			return out, nil, toolErr("count must be from 1 to 10 without an API key")
		}
		cands := s.ix.Matching(f, s.ix.Samples(c.Slug))
		picked := bank.Choose(cands, count, nil)
		out.Source, out.TotalAvailable, out.Returned = "free_sample", len(cands), len(picked)
		return out, picked, nil
	}
	now := s.now()
	tier, _ := s.effectiveTier(k, now)
	if count < 1 || count > tier.MaxLimit {
		return out, nil, toolErr("count must be from 1 to %d on the %s tier", tier.MaxLimit, tier.Title)
	}
	cands := s.ix.Matching(f, nil)
	out.Source, out.TotalAvailable = "bank", len(cands)
	pick := bank.PickRandom(cands, count)
	if s.cfg.AccountingOff {
		picked := pick(seen{}, certbank.Unlimited)
		out.Returned = len(picked)
		return out, picked, nil
	}
	sp := &spend{keyID: k.ID, tier: tier, now: now, pick: pick, count: true}
	if err := s.acct.do(ctx, sp); err != nil {
		code := certbank.ErrorCode(err)
		var le *limitError
		if errors.As(err, &le) {
			s.metrics.reject(string(code))
		}
		if code == certbank.Internal {
			s.log.Error("mcp get_practice_questions failed", "id", requestID(ctx), "key_id", k.ID, "err", err)
			return out, nil, toolErr("the request could not be recorded; retry shortly")
		}
		return out, nil, toolErr("%s", certbank.ErrorMessage(err))
	}
	out.Returned = len(sp.picked)
	u := s.uniqueOf(tier, sp.usage.SeenCount)
	out.UniqueQuestions = &u
	return out, sp.picked, nil
}

func (s *Server) mcpCheck(ctx context.Context, in checkIn) (checkOut, error) {
	l, err := certbank.ParseLetter(in.Answer)
	if err != nil {
		return checkOut{}, toolErr("answer %q must be one of A, B, C, D", in.Answer)
	}
	e, ok := s.ix.ByID(strings.TrimSpace(in.QuestionID))
	if !ok {
		return checkOut{}, toolErr("unknown question_id %q; use an id returned by get_practice_questions", in.QuestionID)
	}
	if !s.mcpMayCheck(ctx, e) {
		return checkOut{}, toolErr("question %s was not served to you: without an API key only free-sample questions can be checked; with a key, questions the key has been served", e.Q.ID)
	}
	return checkOut{QuestionID: e.Q.ID, Chosen: string(l), Correct: l == e.Q.Answer, CorrectAnswer: string(e.Q.Answer), Explanation: *e.Text().Explanation}, nil
}

// mcpMayCheck reports whether the caller may see e's answer: free-sample
// questions always; others only for a key that has been served them.
func (s *Server) mcpMayCheck(ctx context.Context, e *bank.Entry) bool {
	for _, x := range s.ix.Samples(e.Cert.Slug) {
		if x == e {
			return true
		}
	}
	k, ok := keyFromContext(ctx)
	if !ok {
		return false
	}
	tier, _ := s.effectiveTier(k, s.now())
	sp := &spend{keyID: k.ID, tier: tier, now: s.now(), count: false}
	if err := s.acct.do(ctx, sp); err != nil {
		return false
	}
	return seenOf(&sp.usage).Has(e.Hash)
}

// newMCPHandler builds the HTTP side: the SDK's stateless handler.
// handleMCP does the Origin check, CORS, key authentication and body limit
// first.
func (s *Server) newMCPHandler() http.Handler {
	srv := s.newMCPServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		MaxRequestBodyBytes:        mcpMaxBody,
		DisableLocalhostProtection: s.cfg.TrustProxy, // behind a same-host proxy Host is not loopback
	})
	return h
}

func mcpImplementation(s *Server) *mcp.Implementation {
	return &mcp.Implementation{Name: "certbank", Title: s.cfg.Bank.Site.Name, Version: "1.0.0"}
}

// allowedOrigin reports whether a browser page at origin may call /api/mcp:
// the site's own origins, the request's own host, and configured ones.
func (s *Server) allowedOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if u.Host == r.Host {
		return true
	}
	site := s.cfg.Bank.Site
	for _, base := range []string{site.BaseURL, site.MCPURL, site.FunctionsURL} {
		if b, err := url.Parse(base); err == nil && strings.EqualFold(b.Scheme+"://"+b.Host, u.Scheme+"://"+u.Host) {
			return true
		}
	}
	for _, o := range s.cfg.AllowedOrigins {
		if o == "*" || strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	return false
}

// handleMCP serves /api/mcp.
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin != "" {
		if !s.allowedOrigin(origin, r) {
			return certbank.Errorf(certbank.Forbidden, "origin %s may not call this MCP endpoint; browser clients must be served from the site's own origin or an allowed one", origin)
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, MCP-Protocol-Version")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "POST, GET, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, Accept, Authorization, x-api-key, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
	}
	if raw := strings.TrimSpace(r.Header.Get("x-api-key")); raw != "" {
		if !validKeyShape(raw) {
			return errUnauthorized
		}
		k, err := s.lookupKey(r.Context(), raw)
		if err != nil {
			return err
		}
		r = r.WithContext(context.WithValue(r.Context(), mcpKeyCtx{}, k))
	}
	r.Body = http.MaxBytesReader(w, r.Body, mcpMaxBody)
	s.mcp.ServeHTTP(w, r)
	return nil
}

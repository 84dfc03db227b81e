package paywall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/certbank/certbank"
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
			for _, p := range s.ix.providers() {
				found = found || strings.EqualFold(p, in.Provider)
			}
			if !found {
				return nil, out, toolErr("unknown provider %q; use one of %s", in.Provider, strings.Join(s.ix.providers(), ", "))
			}
		}
		for _, c := range s.ix.certs {
			if in.Provider != "" && !strings.EqualFold(in.Provider, c.Provider) {
				continue
			}
			cs := certSummary{Slug: c.Slug, Name: c.Name, Provider: c.Provider, ExamCode: c.ExamCode, ExamStatus: string(c.Status),
				Questions: len(s.ix.byCert[c.Slug]), FreeQuestions: len(s.ix.samples[c.Slug])}
			if c.Status == certbank.Retiring {
				cs.ExamNote = c.ExamNote
			}
			out.Certifications = append(out.Certifications, cs)
		}
		return nil, out, nil
	})
	mcp.AddTool(srv, tool("get_exam_blueprint"), func(ctx context.Context, _ *mcp.CallToolRequest, in blueprintIn) (*mcp.CallToolResult, blueprintOut, error) {
		c, ok := s.ix.cert(in.Certification)
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
	for _, c := range s.ix.certs {
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
	for _, e := range s.ix.byCert[c.Slug] {
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
	c, ok := s.ix.cert(strings.Trim(u.Path, "/"))
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	b, _ := json.MarshalIndent(s.blueprint(c), "", "  ")
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
}

func (s *Server) quizPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := req.Params.Arguments
	slug := args["certification"]
	c, ok := s.ix.cert(slug)
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

func toMCPQuestion(e *entry, include bool) mcpQuestion {
	t := e.text()
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
func (s *Server) mcpDraw(ctx context.Context, in practiceIn) (practiceOut, []*entry, error) {
	out := practiceOut{Questions: []mcpQuestion{}}
	c, ok := s.ix.cert(in.Certification)
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
	f := filter{Cert: c.Slug, Difficulty: diff, Domain: domain}
	if !keyed {
		if count < 1 || count > 10 {
			return out, nil, toolErr("count must be from 1 to 10 without an API key")
		}
		cands := s.ix.matching(f, s.ix.samples[c.Slug])
		picked := choose(cands, count, nil)
		out.Source, out.TotalAvailable, out.Returned = "free_sample", len(cands), len(picked)
		return out, picked, nil
	}
	now := s.now()
	tier, _ := s.effectiveTier(k, now)
	if count < 1 || count > tier.MaxLimit {
		return out, nil, toolErr("count must be from 1 to %d on the %s tier", tier.MaxLimit, tier.Title)
	}
	cands := s.ix.matching(f, nil)
	out.Source, out.TotalAvailable = "bank", len(cands)
	pick := pickRandom(cands, count)
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
	e, ok := s.ix.byID[strings.TrimSpace(in.QuestionID)]
	if !ok {
		return checkOut{}, toolErr("unknown question_id %q; use an id returned by get_practice_questions", in.QuestionID)
	}
	if !s.mcpMayCheck(ctx, e) {
		return checkOut{}, toolErr("question %s was not served to you: without an API key only free-sample questions can be checked; with a key, questions the key has been served", e.Q.ID)
	}
	return checkOut{QuestionID: e.Q.ID, Chosen: string(l), Correct: l == e.Q.Answer, CorrectAnswer: string(e.Q.Answer), Explanation: *e.text().Explanation}, nil
}

// mcpMayCheck reports whether the caller may see e's answer: free-sample
// questions always; others only for a key that has been served them.
func (s *Server) mcpMayCheck(ctx context.Context, e *entry) bool {
	for _, x := range s.ix.samples[e.Cert.Slug] {
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
	return seenOf(&sp.usage).has(e.Hash)
}

// newMCPHandler builds the HTTP side: the SDK's stateless handler, with a
// fast path in front of it for the one hot request (see mcpHandler).
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
	info, _ := json.Marshal(map[string]any{mcp.MetaKeyServerInfo: mcpImplementation(s)})
	fh := &mcpHandler{s: s, sdk: h, serverInfoMeta: info}
	return fh
}

func mcpImplementation(s *Server) *mcp.Implementation {
	return &mcp.Implementation{Name: "certbank", Title: s.cfg.Bank.Site.Name, Version: "1.0.0"}
}

// mcpHandler answers tools/call get_practice_questions, the request agents
// repeat, itself, and gives every other request to the SDK.
//
// The SDK decodes each request several times over and builds a session per
// request, which made a tools/call about eight times as costly as the same
// draw over REST (see BENCHMARKS.md). The fast path takes only requests of
// exactly the plain shape the SDK would accept and run — a single tools/call
// with protocol version 2026-07-28 (with its Mcp-Method, Mcp-Name and _meta),
// 2025-11-25 or 2025-06-18, and arguments that satisfy the tool's input
// schema — runs the same mcpDraw as the SDK's tool handler, and writes the
// result the SDK would write. Anything else (other methods or tools, other
// protocol versions, sessions, extra _meta such as a progress token, any
// malformed or schema-invalid input) goes to the SDK, which answers or
// refuses it as before; so the fast path changes no answer, only the cost.
type mcpHandler struct {
	s              *Server
	sdk            http.Handler
	serverInfoMeta []byte // result._meta of modern-era results
}

// mcpJSON is a question as get_practice_questions returns it: without
// (which 0) or with (which 1) its answer. It is byte for byte the
// pay-per-request encoding the index already holds (same fields in the same
// order), so no second copy of the bank is kept; the text block escapes it
// when a response is written.
// It returns the bytes before the closing brace, which the caller writes
// ('}' needs no escaping).
func mcpJSON(e *entry, which int) []byte {
	if which == 1 {
		return e.paidFull[:len(e.paidFull)-1]
	}
	return e.paidQuizOpen()
}

const mcpModern = "2026-07-28"

func (h *mcpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !h.fastHeaders(r) {
		h.sdk.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) { // the SDK's answer
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return
	}
	id, in, ok := parseFastCall(body, r.Header.Get("Mcp-Protocol-Version") == mcpModern)
	if !ok {
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.sdk.ServeHTTP(w, r)
		return
	}
	out, picked, err := h.s.mcpDraw(r.Context(), in)
	h.write(w, r, id, out, picked, in.IncludeAnswers, err)
}

// fastHeaders reports whether r's headers are those of a request the fast
// path may take: the checks the SDK makes, passed.
func (h *mcpHandler) fastHeaders(r *http.Request) bool {
	hd := r.Header
	switch hd.Get("Mcp-Protocol-Version") {
	case mcpModern:
		if hd.Get("Mcp-Method") != "tools/call" || hd.Get("Mcp-Name") != "get_practice_questions" {
			return false
		}
	case "2025-11-25", "2025-06-18":
		if m := hd.Values("Mcp-Method"); len(m) > 0 && (len(m) > 1 || m[0] != "tools/call") {
			return false
		}
		if n := hd.Values("Mcp-Name"); len(n) > 0 && (len(n) > 1 || n[0] != "get_practice_questions") {
			return false
		}
	default:
		return false
	}
	if len(hd.Values("Mcp-Session-Id")) > 0 || len(hd.Values("Last-Event-Id")) > 0 || len(hd.Values("Mcp-Protocol-Version")) != 1 {
		return false
	}
	if ct, _, err := mime.ParseMediaType(hd.Get("Content-Type")); err != nil || ct != "application/json" {
		return false
	}
	jsonOK, streamOK := false, false
	for _, v := range hd.Values("Accept") {
		for _, tok := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(tok, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				jsonOK = true
			case "text/event-stream":
				streamOK = true
			}
		}
	}
	if !jsonOK || !streamOK {
		return false
	}
	// The SDK's DNS-rebinding guard: on a loopback listener, Host must be
	// loopback too.
	if !h.s.cfg.TrustProxy {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil && isLoopback(la.String()) && !isLoopback(r.Host) {
			return false
		}
	}
	return true
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// parseFastCall decodes body as a single JSON-RPC tools/call of
// get_practice_questions of the era given, with schema-valid arguments. It
// returns the request id (as JSON) and the arguments, or ok false for
// anything else, which then goes to the SDK. It reads only that narrow
// shape, in one pass, and gives up at anything unusual (an unknown or
// repeated key, a null, a number that is not a plain integer); keys match
// exactly, as in the SDK's decoder.
func parseFastCall(body []byte, modern bool) (id []byte, in practiceIn, ok bool) {
	p := &fastParser{b: body}
	var rpc, method, name bool
	var params, hasArgs, hasCert, meta bool
	ok = p.object(func(key []byte) bool {
		switch string(key) {
		case "jsonrpc":
			v, ok := p.str()
			return ok && !rpc && v == "2.0" && p.set(&rpc)
		case "method":
			v, ok := p.str()
			return ok && !method && v == "tools/call" && p.set(&method)
		case "id":
			if id != nil {
				return false
			}
			if p.peek() == '"' {
				v, ok := p.str()
				id = marshal(v)
				return ok
			}
			n, ok := p.integer(64)
			id = strconv.AppendInt(nil, n, 10)
			return ok
		case "params":
			return !params && p.set(&params) && p.object(func(key []byte) bool {
				switch string(key) {
				case "name":
					v, ok := p.str()
					return ok && !name && v == "get_practice_questions" && p.set(&name)
				case "arguments":
					return !hasArgs && p.set(&hasArgs) && p.object(func(key []byte) bool {
						return p.argument(string(key), &in, &hasCert)
					})
				case "_meta":
					return modern && !meta && p.set(&meta) && p.modernMeta()
				}
				return false
			})
		}
		return false
	})
	p.space()
	ok = ok && p.i == len(p.b) && rpc && method && id != nil && name && hasCert && meta == modern
	return id, in, ok
}

// fastParser reads the narrow JSON of parseFastCall.
type fastParser struct {
	b    []byte
	i    int
	seen [5]bool // arguments given, in argument's order
}

func (p *fastParser) set(b *bool) bool { *b = true; return true }

func (p *fastParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *fastParser) peek() byte {
	p.space()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// object reads {"key": value, ...}, calling member with each key to read
// the value; member returns false to give up.
func (p *fastParser) object(member func(key []byte) bool) bool {
	if p.peek() != '{' {
		return false
	}
	p.i++
	if p.peek() == '}' {
		p.i++
		return true
	}
	for {
		key, ok := p.rawString()
		if !ok || p.peek() != ':' {
			return false
		}
		p.i++
		if !member(key) {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// rawString reads a string without escapes (keys), returning its bytes.
func (p *fastParser) rawString() ([]byte, bool) {
	if p.peek() != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return p.b[start:j], utf8.Valid(p.b[start:j])
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string value; one with escapes is decoded by encoding/json.
func (p *fastParser) str() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	start := p.i
	if raw, ok := p.rawString(); ok {
		return string(raw), true
	}
	p.i = start
	end := p.skipString()
	if end < 0 {
		return "", false
	}
	var v string
	if !utf8.Valid(p.b[start:end]) || json.Unmarshal(p.b[start:end], &v) != nil {
		return "", false
	}
	p.i = end
	return v, true
}

// skipString returns the end of the string at p.i, or -1.
func (p *fastParser) skipString() int {
	for j := p.i + 1; j < len(p.b); j++ {
		switch p.b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// integer reads a JSON integer (no fraction or exponent) that fits in bits.
func (p *fastParser) integer(bits int) (int64, bool) {
	p.space()
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || (p.b[digits] == '0' && p.i > digits+1) {
		return 0, false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p.b[start:p.i]), 10, bits)
	return n, err == nil
}

// argument reads one get_practice_questions argument; the types are those
// of the tool's input schema, and a repeated or unknown one gives up.
func (p *fastParser) argument(key string, in *practiceIn, hasCert *bool) bool {
	names := [...]string{"certification", "difficulty", "domain", "count", "include_answers"}
	k := slices.Index(names[:], key)
	if k < 0 || p.seen[k] {
		return false
	}
	p.seen[k] = true
	var ok bool
	switch k {
	case 0:
		in.Certification, ok = p.str()
		*hasCert = true
	case 1:
		in.Difficulty, ok = p.str()
	case 2:
		in.Domain, ok = p.str()
	case 3:
		var n int64
		n, ok = p.integer(32)
		in.Count = int(n)
	case 4:
		p.space()
		switch {
		case bytes.HasPrefix(p.b[p.i:], []byte("true")):
			in.IncludeAnswers, ok = true, true
			p.i += 4
		case bytes.HasPrefix(p.b[p.i:], []byte("false")):
			ok = true
			p.i += 5
		}
	}
	return ok
}

// modernMeta reads a modern request's _meta: exactly the protocol version,
// the client capabilities and optionally the client info, well-formed.
func (p *fastParser) modernMeta() bool {
	var version, caps, info bool
	return p.object(func(key []byte) bool {
		switch string(key) {
		case mcp.MetaKeyProtocolVersion:
			v, ok := p.str()
			return ok && !version && v == mcpModern && p.set(&version)
		case mcp.MetaKeyClientCapabilities:
			return !caps && p.set(&caps) && p.decodeObject(&mcp.ClientCapabilities{})
		case mcp.MetaKeyClientInfo:
			return !info && p.set(&info) && p.decodeObject(&mcp.Implementation{})
		}
		return false
	}) && version && caps
}

// decodeObject decodes the object at p.i into v, strictly.
func (p *fastParser) decodeObject(v any) bool {
	if p.peek() != '{' {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(p.b[p.i:]))
	dec.DisallowUnknownFields()
	if dec.Decode(v) != nil {
		return false
	}
	p.i += int(dec.InputOffset())
	return true
}

// write sends the JSON-RPC response the SDK's typed tool handler would:
// the output as structuredContent and as a JSON text block, or a tool error
// (isError) with the message; modern-era results also carry resultType and
// the server info.
func (h *mcpHandler) write(w http.ResponseWriter, r *http.Request, id []byte, out practiceOut, picked []*entry, include bool, err error) {
	modern := r.Header.Get("Mcp-Protocol-Version") == mcpModern
	buf := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(buf)
	buf.Reset()
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	buf.WriteString(`,"result":{`)
	if modern {
		buf.WriteString(`"_meta":`)
		buf.Write(h.serverInfoMeta)
		buf.WriteByte(',')
	}
	if err != nil {
		buf.WriteString(`"content":[{"type":"text","text":`)
		buf.Write(marshal(err.Error()))
		buf.WriteString(`}],"isError":true`)
	} else {
		// The structured output, in practiceOut's field order, is head,
		// the questions and tail; the text block is the same escaped.
		which := 0
		if include {
			which = 1
		}
		head := bufPool.Get().(*bytes.Buffer)
		defer bufPool.Put(head)
		head.Reset()
		head.WriteString(`{"certification":`)
		head.Write(marshal(out.Certification))
		fmt.Fprintf(head, `,"source":%s,"total_available":%d,"returned":%d,"questions":[`, marshal(out.Source), out.TotalAvailable, out.Returned)
		var tail []byte
		if u := out.UniqueQuestions; u != nil {
			tail = fmt.Appendf(nil, `],"unique_questions":{"limit":%d,"used":%d,"remaining":%d}}`, u.Limit, u.Used, u.Remaining)
		} else {
			tail = []byte(`]}`)
		}
		buf.WriteString(`"content":[{"type":"text","text":"`)
		escapeJSON(buf, head.Bytes())
		for i, e := range picked {
			if i > 0 {
				buf.WriteByte(',')
			}
			escapeJSON(buf, mcpJSON(e, which))
			buf.WriteByte('}')
		}
		escapeJSON(buf, tail)
		buf.WriteString(`"}],"structuredContent":`)
		buf.Write(head.Bytes())
		for i, e := range picked {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(mcpJSON(e, which))
			buf.WriteByte('}')
		}
		buf.Write(tail)
	}
	if modern {
		buf.WriteString(`,"resultType":"complete"`)
	}
	buf.WriteString("}}")
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
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

// escapeJSON writes b (valid UTF-8) escaped for the inside of a JSON
// string.
func escapeJSON(buf *bytes.Buffer, b []byte) {
	const hex = "0123456789abcdef"
	buf.Grow(len(b) + len(b)/8)
	start := 0
	for i, c := range b {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf.Write(b[start:i])
		switch c {
		case '"', '\\':
			buf.WriteByte('\\')
			buf.WriteByte(c)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			buf.WriteString(`\u00`)
			buf.WriteByte(hex[c>>4])
			buf.WriteByte(hex[c&0xf])
		}
		start = i + 1
	}
	buf.Write(b[start:])
}

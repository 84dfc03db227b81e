package generator

import (
	"fmt"

	"github.com/certbank/certbank"
)

// obj is a JSON object in the OpenAPI document; encoding/json writes map
// keys sorted, so the bytes are deterministic.
type obj = map[string]any

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func errResponse(desc string, codes ...string) obj {
	schema := obj{"allOf": []any{ref("Error")}}
	if len(codes) > 0 {
		schema = obj{"allOf": []any{ref("Error"), obj{"properties": obj{"code": obj{"enum": codes}}}}}
	}
	return obj{"description": desc, "content": obj{"application/json": obj{"schema": schema}}}
}

func jsonResponse(desc string, schema obj) obj {
	return obj{"description": desc, "content": obj{"application/json": obj{"schema": schema}}}
}

func queryParam(name, desc string, required bool, schema obj) obj {
	return obj{"name": name, "in": "query", "required": required, "description": desc, "schema": schema}
}

func headerParam(name, desc string) obj {
	return obj{"name": name, "in": "header", "required": false, "description": desc, "schema": obj{"type": "string"}}
}

var rateHeaders = obj{
	"RateLimit-Limit":     obj{"description": "Requests allowed in the current minute.", "schema": obj{"type": "integer"}},
	"RateLimit-Remaining": obj{"description": "Requests left in the current minute.", "schema": obj{"type": "integer"}},
	"RateLimit-Reset":     obj{"description": "Seconds until the minute window resets.", "schema": obj{"type": "integer"}},
}

func openAPI(m *model) obj {
	s := m.Site
	slugs := make([]string, len(m.Certs))
	providers := []string{}
	seenProv := map[string]bool{}
	for i, c := range m.Certs {
		slugs[i] = c.Cert.Slug
		if !seenProv[c.Cert.Provider] {
			seenProv[c.Cert.Provider] = true
			providers = append(providers, c.Cert.Provider)
		}
	}
	limits := []any{}
	var prices []obj
	for _, e := range s.Pricing.Entries {
		limits = append(limits, e.Questions)
		with, _ := s.Pricing.Price(e.Questions, true)
		without, _ := s.Pricing.Price(e.Questions, false)
		prices = append(prices, obj{"questions": e.Questions, "include_answer_true": with.Atomic(), "include_answer_false": without.Atomic()})
	}
	tierMax := 0
	for _, t := range s.Tiers {
		tierMax = max(tierMax, t.MaxLimit)
	}
	certParam := func(required bool) obj {
		return queryParam("certification", "Certification slug.", required, obj{"type": "string", "enum": slugs})
	}
	diffParam := queryParam("difficulty", "Only questions of this difficulty.", false, obj{"type": "string", "enum": []string{"easy", "medium", "hard"}})
	includeParam := queryParam("include_answer", "Include the correct answer and explanation (false gives quiz mode).", false, obj{"type": "boolean", "default": false})

	keyedQuestions := func(opID string) obj {
		return obj{"get": obj{
			"operationId": opID,
			"summary":     "Get practice questions with an API key",
			"description": "Randomized questions with filters and quiz mode, counted against the key's tier: requests per minute, per calendar month (UTC) and unique questions. When the unique-question limit is reached the key is served only questions it has seen before. Sequential pagination (random=false with page or cursor) is Enterprise only.",
			"tags":        []string{"API key"},
			"security":    []obj{{"ApiKey": []string{}}},
			"parameters": []obj{
				certParam(false), diffParam,
				queryParam("domain", "Only questions of this exam domain (exact name, see the certifications endpoint).", false, obj{"type": "string"}),
				queryParam("limit", fmt.Sprintf("Questions per request, 1 to the tier's maximum (Free %d, up to %d).", tierLimit(s, certbank.TierFree), tierMax), false, obj{"type": "integer", "minimum": 1, "maximum": tierMax, "default": 10}),
				queryParam("random", "Randomize the order (default). false gives a stable order and needs the Enterprise tier.", false, obj{"type": "boolean", "default": true}),
				includeParam,
				queryParam("page", "Page number for random=false (Enterprise), starting at 1.", false, obj{"type": "integer", "minimum": 1}),
				queryParam("cursor", "Opaque cursor from meta.next_cursor for random=false (Enterprise).", false, obj{"type": "string"}),
			},
			"responses": obj{
				"200": obj{"description": "Questions and accounting.", "headers": rateHeaders, "content": obj{"application/json": obj{"schema": ref("QuestionsResponse")}}},
				"400": errResponse("A parameter is missing or invalid; the message names it and the allowed values.", "INVALID_PARAMS"),
				"401": errResponse("Missing, malformed, unknown or revoked API key.", "UNAUTHORIZED"),
				"403": errResponse("The feature needs a higher tier.", "TIER_REQUIRED"),
				"429": obj{"description": "Rate or monthly limit exceeded.", "headers": obj{"Retry-After": obj{"description": "Seconds to wait.", "schema": obj{"type": "integer"}}}, "content": obj{"application/json": obj{"schema": ref("Error")}}},
				"500": errResponse("Server error.", "INTERNAL"),
				"503": errResponse("The store is unavailable; retry later. The request was not counted.", "UNAVAILABLE"),
			},
		}}
	}
	keyedCerts := func(opID string) obj {
		return obj{"get": obj{
			"operationId": opID,
			"summary":     "List certifications with question counts",
			"tags":        []string{"API key"},
			"security":    []obj{{"ApiKey": []string{}}},
			"parameters":  []obj{queryParam("provider", "Only this provider.", false, obj{"type": "string", "enum": providers})},
			"responses": obj{
				"200": jsonResponse("Certifications.", ref("CertificationsResponse")),
				"400": errResponse("Unknown provider.", "INVALID_PARAMS"),
				"401": errResponse("Missing, malformed, unknown or revoked API key.", "UNAUTHORIZED"),
				"500": errResponse("Server error.", "INTERNAL"),
			},
		}}
	}
	keyedUsage := func(opID string) obj {
		return obj{"get": obj{
			"operationId": opID,
			"summary":     "Current usage, limits and remaining quota of the key",
			"tags":        []string{"API key"},
			"security":    []obj{{"ApiKey": []string{}}},
			"responses": obj{
				"200": jsonResponse("Usage.", ref("Usage")),
				"401": errResponse("Missing, malformed, unknown or revoked API key.", "UNAUTHORIZED"),
				"500": errResponse("Server error.", "INTERNAL"),
				"503": errResponse("The store is unavailable.", "UNAVAILABLE"),
			},
		}}
	}

	paths := obj{
		"/api/v1/x402": obj{"get": obj{
			"operationId": "getX402Questions",
			"summary":     "Get practice questions via x402 payment",
			"description": "No key, no account. Call without payment to receive 402 with the payment requirements (x402 v1 JSON body and v2 PAYMENT-REQUIRED header); pay USDC with an EIP-3009 authorization for the exact amount and retry the identical request with X-PAYMENT (v1) or PAYMENT-SIGNATURE (v2). Not every certification can fill every limit and difficulty: x-payment-info.offers (schema CertificationOffers; also paid_offers in /catalog.json and offers in /.well-known/x402.json) lists, per certification, the combinations that answer 402; any other answers 400 INVALID_PARAMS before any payment, naming the combinations that can be filled.",
			"tags":        []string{"x402"},
			"parameters": []obj{
				certParam(true),
				queryParam("limit", "Number of questions.", true, obj{"type": "integer", "enum": limits}),
				diffParam, includeParam,
				headerParam("X-PAYMENT", "x402 v1 payment payload, base64 of JSON."),
				headerParam("PAYMENT-SIGNATURE", "x402 v2 payment payload, base64 of JSON."),
			},
			"x-payment-info": obj{
				"protocols": []string{"x402"}, "x402Versions": []int{1, 2}, "scheme": "exact",
				"network": m.Network.Name, "networkV2": m.Network.CAIP2, "asset": m.Network.Asset,
				"payTo": s.Payment.PayTo, "currency": "USDC", "decimals": 6, "prices": prices,
				"discovery": s.BaseURL + "/.well-known/x402.json",
				"offers":    offersOf(m),
			},
			"responses": obj{
				"200": obj{"description": "Paid questions.", "headers": obj{
					"X-PAYMENT-RESPONSE": obj{"description": "x402 v1 settlement response, base64 of JSON.", "schema": obj{"type": "string"}},
					"PAYMENT-RESPONSE":   obj{"description": "x402 v2 settlement response, base64 of JSON.", "schema": obj{"type": "string"}},
				}, "content": obj{"application/json": obj{"schema": ref("X402Success")}}},
				"400": errResponse("Missing or invalid parameters, or a combination of limit and difficulty the certification cannot fill (not in x-payment-info.offers); the message names those it can fill. Nothing is charged.", "INVALID_PARAMS"),
				"402": obj{"description": "Payment required, or the payment was refused (the reason is in error).", "headers": obj{
					"PAYMENT-REQUIRED": obj{"description": "x402 v2 PaymentRequired, base64 of JSON.", "schema": obj{"type": "string"}},
				}, "content": obj{"application/json": obj{"schema": ref("PaymentRequired")}}},
				"500": errResponse("Internal error.", "INTERNAL"),
				"503": errResponse("The chain or store is unavailable; nothing was charged.", "UNAVAILABLE"),
			},
		}},
		"/api/v1/questions":                   keyedQuestions("getQuestions"),
		"/functions/v1/api-v1-questions":      keyedQuestions("getQuestionsFunctions"),
		"/api/v1/certifications":              keyedCerts("listCertifications"),
		"/functions/v1/api-v1-certifications": keyedCerts("listCertificationsFunctions"),
		"/api/v1/usage":                       keyedUsage("getUsage"),
		"/functions/v1/api-v1-usage":          keyedUsage("getUsageFunctions"),
		"/api/v1/signup": obj{"post": obj{
			"operationId": "signup",
			"summary":     "Create a Free API key",
			"description": "Returns the key once; only its hash is stored. One active key per email. Rate-limited per client address.",
			"tags":        []string{"API key"},
			"requestBody": obj{"required": true, "content": obj{"application/json": obj{"schema": ref("SignupRequest")}}},
			"responses": obj{
				"201": jsonResponse("The new key, shown once.", ref("SignupResponse")),
				"400": errResponse("Invalid name or email, or a malformed body.", "INVALID_PARAMS"),
				"409": errResponse("This email already has an active key.", "CONFLICT"),
				"429": errResponse("Too many signups from this address.", "RATE_LIMITED"),
				"500": errResponse("Server error.", "INTERNAL"),
			},
		}},
		certbank.PathExam: obj{"get": obj{
			"operationId": "startMockExam",
			"summary":     "Draw a timed mock exam weighted by the exam blueprint (questions without answers)",
			"description": "Full length uses the real exam's number of questions and minutes, half length half of each. With an API key the exam is drawn from the whole bank and counted as one request of that many questions: the tier's unique-question allowance must hold them (the per-request maximum does not apply). Without a key it is drawn from the free sample. Grade it once with POST /api/v1/exam/{id}/answers within 7 days.",
			"tags":        []string{"Learners"},
			"parameters": []obj{certParam(true), {"name": "length", "in": "query", "schema": obj{"type": "string", "enum": []string{"full", "half"}, "default": "full"}},
				headerParam("x-api-key", "Optional API key: without one the exam is drawn from the free sample.")},
			"responses": obj{
				"200": jsonResponse("The exam.", ref("MockExam")),
				"400": errResponse("Unknown certification or length.", "INVALID_PARAMS"),
				"401": errResponse("Malformed, unknown or revoked API key.", "UNAUTHORIZED"),
				"403": errResponse("The key's tier cannot hold an exam of this length.", "TIER_REQUIRED"),
				"409": errResponse("The certification has no questions to draw from.", "INSUFFICIENT_QUESTIONS"),
				"429": errResponse("Rate or monthly limit exceeded.", "RATE_LIMITED", "MONTHLY_LIMIT_EXCEEDED"),
				"500": errResponse("Server error.", "INTERNAL"),
				"503": errResponse("The usage store is unavailable.", "UNAVAILABLE"),
			},
		}},
		certbank.PathExamAnswers: obj{"post": obj{
			"operationId": "gradeMockExam",
			"summary":     "Grade a mock exam once: score by domain and difficulty, and every question with its explanation",
			"tags":        []string{"Learners"},
			"parameters":  []obj{{"name": "id", "in": "path", "required": true, "schema": obj{"type": "string", "pattern": "^ex_[0-9a-f]{32}$"}}},
			"requestBody": obj{"required": true, "content": obj{"application/json": obj{"schema": ref("MockExamAnswers")}}},
			"responses": obj{
				"200": jsonResponse("The graded exam.", ref("MockExamReport")),
				"400": errResponse("An answer for a question not in the exam, a letter other than A-D, or a malformed body.", "INVALID_PARAMS"),
				"404": errResponse("No such exam, or it expired.", "NOT_FOUND"),
				"409": errResponse("The exam was already graded.", "CONFLICT"),
				"500": errResponse("Server error.", "INTERNAL"),
			},
		}},
		certbank.PathAnswers: obj{"post": obj{
			"operationId": "recordPracticeAnswer",
			"summary":     "Record a practice answer for the item statistics (anonymous; says nothing about correctness)",
			"tags":        []string{"Learners"},
			"requestBody": obj{"required": true, "content": obj{"application/json": obj{"schema": ref("PracticeAnswer")}}},
			"responses": obj{
				"204": obj{"description": "Recorded."},
				"400": errResponse("A letter other than A-D, or a malformed body.", "INVALID_PARAMS"),
				"404": errResponse("No such published question.", "NOT_FOUND"),
				"429": errResponse("Too many answers from this address.", "RATE_LIMITED"),
				"500": errResponse("Server error.", "INTERNAL"),
			},
		}},
		certbank.PathReports: obj{"post": obj{
			"operationId": "reportQuestion",
			"summary":     "Report a question believed wrong (no account; rate-limited per client address)",
			"tags":        []string{"Learners"},
			"requestBody": obj{"required": true, "content": obj{"application/json": obj{"schema": ref("QuestionReport")}}},
			"responses": obj{
				"201": jsonResponse("The report, queued for review.", ref("QuestionReportCreated")),
				"400": errResponse("Unknown reason, text over 1,000 characters, or a malformed body.", "INVALID_PARAMS"),
				"404": errResponse("No such published question.", "NOT_FOUND"),
				"429": errResponse("Too many reports from this address.", "RATE_LIMITED"),
				"500": errResponse("Server error.", "INTERNAL"),
			},
		}},
		"/api/v1/export": obj{"get": obj{
			"operationId": "exportCertification",
			"summary":     "Bulk export of one certification as NDJSON (Enterprise)",
			"tags":        []string{"API key"},
			"security":    []obj{{"ApiKey": []string{}}},
			"parameters":  []obj{certParam(true), includeParam},
			"responses": obj{
				"200": obj{"description": "One question per line, in a stable order.", "content": obj{"application/x-ndjson": obj{"schema": ref("KeyQuestion")}}},
				"400": errResponse("Missing or invalid parameters.", "INVALID_PARAMS"),
				"401": errResponse("Missing, malformed, unknown or revoked API key.", "UNAUTHORIZED"),
				"403": errResponse("Bulk export needs the Enterprise tier.", "TIER_REQUIRED"),
				"429": errResponse("Rate or monthly limit exceeded.", "RATE_LIMITED", "MONTHLY_LIMIT_EXCEEDED"),
				"500": errResponse("Server error.", "INTERNAL"),
			},
		}},
		"/api/{slug}/questions-free.json": obj{"get": obj{
			"operationId": "getFreeSample",
			"summary":     "Free sample feed of about 20 questions with answers (static, no key)",
			"tags":        []string{"Free"},
			"parameters":  []obj{{"name": "slug", "in": "path", "required": true, "schema": obj{"type": "string", "enum": slugs}}},
			"responses":   obj{"200": jsonResponse("The free sample.", ref("FreeFeed")), "404": obj{"description": "Unknown certification."}},
		}},
		"/api/mcp": obj{"post": obj{
			"operationId": "mcp",
			"summary":     "MCP endpoint (Streamable HTTP, stateless, JSON responses)",
			"description": "Model Context Protocol over Streamable HTTP (revisions 2025-11-25 and 2026-07-28). Optional x-api-key header. See /.well-known/mcp/server-card.json.",
			"tags":        []string{"MCP"},
			"parameters":  []obj{headerParam("x-api-key", "Optional API key.")},
			"requestBody": obj{"required": true, "content": obj{"application/json": obj{"schema": obj{"type": "object", "description": "A JSON-RPC 2.0 message."}}}},
			"responses": obj{
				"200": obj{"description": "JSON-RPC response.", "content": obj{"application/json": obj{"schema": obj{"type": "object"}}}},
				"202": obj{"description": "Notification accepted."},
				"400": obj{"description": "Malformed request or protocol header mismatch."},
				"401": errResponse("Unknown or revoked API key.", "UNAUTHORIZED"),
				"403": obj{"description": "Foreign Origin."},
			},
		}},
	}

	question := obj{"type": "object", "required": []string{"id", "question", "options", "difficulty", "domain"}, "properties": obj{
		"id": obj{"type": "string"}, "question": obj{"type": "string"}, "options": ref("Options"),
		"difficulty":  obj{"type": "string", "enum": []string{"easy", "medium", "hard"}},
		"domain":      obj{"type": "string"},
		"answer":      obj{"type": []string{"string", "null"}, "enum": []any{"A", "B", "C", "D", nil}, "description": "Present only when include_answer=true."},
		"explanation": obj{"type": []string{"string", "null"}, "description": "Present only when include_answer=true."},
	}}
	// A free feed question is a paid one with its references.
	freeProps := obj{"references": obj{"type": "array", "items": obj{"type": "string"}, "description": "Sources a learner can read further in."},
		"calibrated": obj{"type": "boolean", "description": "Present (true) when the difficulty was measured from learners' answers, not only rated."}}
	for k, v := range question["properties"].(obj) {
		freeProps[k] = v
	}
	freeQuestion := obj{"type": "object", "required": question["required"], "properties": freeProps}
	limitObj := obj{"type": "object", "required": []string{"limit", "used", "remaining"}, "properties": obj{
		"limit": obj{"type": []string{"integer", "null"}, "description": "null when unlimited"}, "used": obj{"type": "integer"},
		"remaining": obj{"type": []string{"integer", "null"}}, "resets_at": obj{"type": "string", "format": "date-time"},
	}}
	schemas := obj{
		"Error": obj{"type": "object", "required": []string{"error", "code"}, "properties": obj{
			"error": obj{"type": "string", "description": "What went wrong and what to do."},
			"code":  obj{"type": "string", "enum": []string{"INVALID_PARAMS", "UNAUTHORIZED", "TIER_REQUIRED", "NOT_FOUND", "CONFLICT", "RATE_LIMITED", "MONTHLY_LIMIT_EXCEEDED", "UNAVAILABLE", "INTERNAL"}},
		}},
		"Options": obj{"type": "object", "required": []string{"A", "B", "C", "D"}, "additionalProperties": false, "properties": obj{
			"A": obj{"type": "string"}, "B": obj{"type": "string"}, "C": obj{"type": "string"}, "D": obj{"type": "string"},
		}},
		"X402Question": question,
		"FreeQuestion": freeQuestion,
		"PaidOffer": obj{"type": "object", "required": []string{"limit", "difficulty"}, "additionalProperties": false,
			"description": "One request the pay-per-request route can fill: limit questions of one difficulty, or of any (the difficulty parameter left out). It can be filled when the certification has at least limit published questions of that difficulty (of all difficulties for any).",
			"properties": obj{
				"limit":      obj{"type": "integer", "enum": limits},
				"difficulty": obj{"type": "string", "enum": []string{certbank.AnyDifficulty, "easy", "medium", "hard"}},
			}},
		"CertificationOffers": obj{"type": "object", "required": []string{"certification", "offers"}, "additionalProperties": false,
			"description": "The paid requests one certification can fill (402) in price-list order, any then easy, medium, hard within a limit; every other combination answers 400.",
			"properties": obj{
				"certification": obj{"type": "string", "enum": slugs},
				"offers":        obj{"type": "array", "items": ref("PaidOffer")},
				"note":          obj{"type": "string", "description": "Present while some combinations of the price list cannot be filled: names them."},
			}},
		"X402Success": obj{"type": "object", "required": []string{"meta", "questions"}, "properties": obj{
			"meta": obj{"type": "object", "required": []string{"certification", "limit", "difficulty", "include_answer", "payment_verified", "price_paid_usdc"}, "properties": obj{
				"certification": obj{"type": "string"}, "limit": obj{"type": "integer"},
				"difficulty": obj{"type": []string{"string", "null"}}, "include_answer": obj{"type": "boolean"},
				"payment_verified": obj{"type": "boolean"}, "price_paid_usdc": obj{"type": "string", "examples": []string{"0.01"}},
			}},
			"questions": obj{"type": "array", "items": ref("X402Question")},
		}},
		"PaymentRequirements": obj{"type": "object", "required": []string{"scheme", "network", "maxAmountRequired", "resource", "description", "mimeType", "payTo", "maxTimeoutSeconds", "asset", "extra"}, "properties": obj{
			"scheme": obj{"type": "string", "const": "exact"}, "network": obj{"type": "string", "examples": []string{m.Network.Name}},
			"maxAmountRequired": obj{"type": "string", "description": "Atomic USDC units (6 decimals)."},
			"resource":          obj{"type": "string", "format": "uri"}, "description": obj{"type": "string"},
			"mimeType": obj{"type": "string"}, "payTo": obj{"type": "string"}, "maxTimeoutSeconds": obj{"type": "integer"},
			"asset": obj{"type": "string"},
			"extra": obj{"type": "object", "properties": obj{"name": obj{"type": "string"}, "version": obj{"type": "string"}}},
		}},
		"PaymentRequired": obj{"type": "object", "required": []string{"x402Version", "error", "accepts"}, "properties": obj{
			"x402Version": obj{"type": "integer", "const": 1}, "error": obj{"type": "string", "description": "x402 reason code: why a payment is required or was refused."},
			"message": obj{"type": "string", "description": "When a payment was refused: what was wrong with it, in words."},
			"accepts": obj{"type": "array", "items": ref("PaymentRequirements")},
		}},
		"KeyQuestion": obj{"type": "object", "required": []string{"id", "question", "options", "difficulty", "domain", "certification"}, "properties": obj{
			"id": obj{"type": "string"}, "question": obj{"type": "string"}, "options": ref("Options"),
			"difficulty": obj{"type": "string", "enum": []string{"easy", "medium", "hard"}}, "domain": obj{"type": "string"},
			"certification": obj{"type": "object", "required": []string{"name", "slug", "provider"}, "properties": obj{
				"name": obj{"type": "string"}, "slug": obj{"type": "string"}, "provider": obj{"type": "string"},
			}},
			"objective":      obj{"type": "string", "description": "The exam guide objective the question tests, e.g. \"2.3\"."},
			"correct_answer": obj{"type": "string", "enum": []string{"A", "B", "C", "D"}, "description": "Omitted in quiz mode."},
			"explanation":    obj{"type": "string", "description": "Omitted in quiz mode."},
		}},
		"QuestionsResponse": obj{"type": "object", "required": []string{"data", "meta"}, "properties": obj{
			"data": obj{"type": "array", "items": ref("KeyQuestion")},
			"meta": obj{"type": "object", "required": []string{"total_available", "returned", "limit", "random", "unique_questions"}, "properties": obj{
				"total_available": obj{"type": "integer"}, "returned": obj{"type": "integer"}, "limit": obj{"type": "integer"},
				"random": obj{"type": "boolean"},
				"unique_questions": obj{"type": "object", "required": []string{"limit", "used", "remaining"}, "properties": obj{
					"limit": obj{"type": "integer"}, "used": obj{"type": "integer"}, "remaining": obj{"type": "integer"},
				}},
				"page": obj{"type": "integer"}, "next_cursor": obj{"type": "string"},
			}},
		}},
		"Certification": obj{"type": "object", "required": []string{"slug", "name", "provider", "questions", "exam_status"}, "properties": obj{
			"slug": obj{"type": "string"}, "name": obj{"type": "string"}, "provider": obj{"type": "string"},
			"exam_code": obj{"type": "string"}, "exam_status": obj{"type": "string", "enum": []string{"current", "retiring"}},
			"exam_note": obj{"type": "string"}, "questions": obj{"type": "integer"},
			"difficulty": obj{"type": "object", "properties": obj{"easy": obj{"type": "integer"}, "medium": obj{"type": "integer"}, "hard": obj{"type": "integer"}}},
			"domains":    obj{"type": "array", "items": obj{"type": "object", "properties": obj{"name": obj{"type": "string"}, "weight": obj{"type": "integer"}, "questions": obj{"type": "integer"}}}},
		}},
		"CertificationsResponse": obj{"type": "object", "required": []string{"data", "meta"}, "properties": obj{
			"data": obj{"type": "array", "items": ref("Certification")},
			"meta": obj{"type": "object", "properties": obj{"total": obj{"type": "integer"}, "total_questions": obj{"type": "integer"}}},
		}},
		"Usage": obj{"type": "object", "required": []string{"tier", "requests", "unique_questions"}, "properties": obj{
			"key": obj{"type": "object", "properties": obj{"id": obj{"type": "string"}, "prefix": obj{"type": "string"}, "created_at": obj{"type": "string", "format": "date-time"}}},
			"tier": obj{"type": "object", "properties": obj{
				"name": obj{"type": "string"}, "title": obj{"type": "string"}, "until": obj{"type": []string{"string", "null"}, "format": "date-time"}, "max_limit": obj{"type": "integer"},
				"pagination":  obj{"type": "boolean", "description": "Whether the tier may page through a certification in a stable order (random=false)."},
				"bulk_export": obj{"type": "boolean", "description": "Whether the tier may use /api/v1/export."},
			}},
			"questions_this_month": obj{"type": "integer", "description": "Questions served to the key this calendar month (UTC)."},
			"requests":             obj{"type": "object", "properties": obj{"minute": limitObj, "month": limitObj}},
			"unique_questions": obj{"type": "object", "required": []string{"limit", "used", "remaining"}, "properties": obj{
				"limit": obj{"type": "integer"}, "used": obj{"type": "integer"}, "remaining": obj{"type": "integer"},
			}},
		}},
		"SignupRequest": obj{"type": "object", "required": []string{"name", "email"}, "additionalProperties": false, "properties": obj{
			"name": obj{"type": "string", "minLength": 1, "maxLength": 100}, "email": obj{"type": "string", "format": "email", "maxLength": 254},
		}},
		"SignupResponse": obj{"type": "object", "required": []string{"api_key", "tier", "limits"}, "properties": obj{
			"api_key": obj{"type": "string", "description": "Shown once. Store it now."},
			"key_id":  obj{"type": "string"}, "prefix": obj{"type": "string"}, "tier": obj{"type": "string"},
			"limits": obj{"type": "object", "properties": obj{
				"requests_per_minute": obj{"type": "integer"}, "requests_per_month": obj{"type": []string{"integer", "null"}},
				"unique_questions": obj{"type": []string{"integer", "null"}}, "max_limit": obj{"type": "integer"},
			}},
			"message": obj{"type": "string"},
		}},
		"Tally": obj{"type": "object", "required": []string{"name", "correct", "total", "percent"}, "additionalProperties": false, "properties": obj{
			"name": obj{"type": "string"}, "correct": obj{"type": "integer"}, "total": obj{"type": "integer"}, "percent": obj{"type": "integer"},
		}},
		"MockExam": obj{"type": "object", "required": []string{"id", "certification", "questions", "meta"}, "additionalProperties": false, "properties": obj{
			"id": obj{"type": "string", "description": "Unguessable; grade the exam with it."},
			"certification": obj{"type": "object", "required": []string{"slug", "name", "provider"}, "properties": obj{
				"slug": obj{"type": "string"}, "name": obj{"type": "string"}, "provider": obj{"type": "string"}, "exam_code": obj{"type": "string"},
			}},
			"questions": obj{"type": "array", "items": ref("KeyQuestion"), "description": "Without correct_answer and explanation."},
			"meta": obj{"type": "object", "required": []string{"length", "source", "questions", "requested", "minutes", "created_at", "expires_at", "domains", "submit"}, "additionalProperties": false, "properties": obj{
				"length": obj{"type": "string", "enum": []string{"full", "half"}}, "source": obj{"type": "string", "enum": []string{"bank", "free_sample"}},
				"questions": obj{"type": "integer"}, "requested": obj{"type": "integer", "description": "The real exam's length, or half of it."},
				"minutes":    obj{"type": "integer"},
				"created_at": obj{"type": "string", "format": "date-time"}, "expires_at": obj{"type": "string", "format": "date-time"},
				"domains": obj{"type": "array", "items": obj{"type": "object", "required": []string{"name", "weight", "questions"}, "properties": obj{
					"name": obj{"type": "string"}, "weight": obj{"type": "integer"}, "questions": obj{"type": "integer"},
				}}},
				"submit": obj{"type": "string", "description": "The path to POST the answers to."},
				"note":   obj{"type": "string", "description": "Why the exam is shorter than the real one, when it is."},
			}},
		}},
		"MockExamAnswers": obj{"type": "object", "required": []string{"answers"}, "additionalProperties": false, "properties": obj{
			"answers": obj{"type": "object", "description": "Question id to the chosen letter; unanswered questions count as wrong.",
				"additionalProperties": obj{"type": "string", "enum": []string{"A", "B", "C", "D", "a", "b", "c", "d"}}},
		}},
		"MockExamReport": obj{"type": "object", "required": []string{"id", "certification", "graded_at", "score", "answered", "by_domain", "by_difficulty", "questions"}, "additionalProperties": false, "properties": obj{
			"id": obj{"type": "string"}, "certification": obj{"type": "object"},
			"graded_at": obj{"type": "string", "format": "date-time"},
			"score":     ref("Tally"), "answered": obj{"type": "integer"},
			"by_domain": obj{"type": "array", "items": ref("Tally")}, "by_difficulty": obj{"type": "array", "items": ref("Tally")},
			"questions": obj{"type": "array", "items": obj{"type": "object", "required": []string{"id", "question", "options", "domain", "difficulty", "chosen", "correct_answer", "correct", "explanation"}, "additionalProperties": false, "properties": obj{
				"id": obj{"type": "string"}, "question": obj{"type": "string"}, "options": ref("Options"),
				"domain": obj{"type": "string"}, "objective": obj{"type": "string"}, "difficulty": obj{"type": "string", "enum": []string{"easy", "medium", "hard"}},
				"chosen":         obj{"type": []string{"string", "null"}, "enum": []any{"A", "B", "C", "D", nil}, "description": "null when unanswered"},
				"correct_answer": obj{"type": "string", "enum": []string{"A", "B", "C", "D"}}, "correct": obj{"type": "boolean"},
				"explanation": obj{"type": "string"},
			}}},
		}},
		"PracticeAnswer": obj{"type": "object", "required": []string{"question_id", "answer"}, "additionalProperties": false, "properties": obj{
			"question_id": obj{"type": "string"}, "answer": obj{"type": "string", "enum": []string{"A", "B", "C", "D", "a", "b", "c", "d"}},
		}},
		"QuestionReport": obj{"type": "object", "required": []string{"question_id", "reason"}, "additionalProperties": false, "properties": obj{
			"question_id": obj{"type": "string"},
			"reason":      obj{"type": "string", "enum": []string{"wrong_key", "ambiguous", "outdated", "typo", "other"}},
			"text":        obj{"type": "string", "maxLength": 1000},
		}},
		"QuestionReportCreated": obj{"type": "object", "required": []string{"id", "question_id", "reason", "status"}, "additionalProperties": false, "properties": obj{
			"id": obj{"type": "string"}, "question_id": obj{"type": "string"}, "reason": obj{"type": "string"},
			"status": obj{"type": "string", "enum": []string{"open"}}, "message": obj{"type": "string"},
		}},
		"FreeFeed": obj{"type": "object", "required": []string{"certification", "generated", "count", "questions"}, "properties": obj{
			"certification": obj{"type": "object"}, "generated": obj{"type": "string", "format": "date"},
			"count": obj{"type": "integer"}, "questions": obj{"type": "array", "items": ref("FreeQuestion")}, "more": obj{"type": "object"},
		}},
	}
	servers := []obj{{"url": s.BaseURL, "description": "main site"}}
	if s.FunctionsURL != s.BaseURL {
		servers = append(servers, obj{"url": s.FunctionsURL, "description": "API-key functions host"})
	}
	return obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":       s.Name + " question API",
			"version":     "1.0.0",
			"description": s.Description,
			"contact":     obj{"email": s.Contact, "url": s.BaseURL + "/developers/"},
		},
		"servers":    servers,
		"tags":       []obj{{"name": "x402"}, {"name": "API key"}, {"name": "Free"}, {"name": "Learners"}, {"name": "MCP"}},
		"paths":      paths,
		"components": obj{"schemas": schemas, "securitySchemes": obj{"ApiKey": obj{"type": "apiKey", "in": "header", "name": "x-api-key"}}},
	}
}

func tierLimit(s certbank.Site, name string) int {
	t, _ := s.Tier(name)
	return t.MaxLimit
}

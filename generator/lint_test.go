package generator_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

// cleanItems are eight distinct, well-written items: a stem, the key and
// three distractors with why each is wrong. None is lint-worthy.
var cleanItems = []struct {
	stem   string
	key    string
	why    string
	wrong  [3]string
	whyNot [3]string
}{
	{"A web server must prove its identity to browsers before any form data is sent. Which mechanism does this?",
		"A certificate signed by a trusted authority", "the browser checks the signature chain against its trust store",
		[3]string{"A longer session cookie lifetime setting", "A stricter password rotation schedule", "A larger firewall state table size"},
		[3]string{"cookie lifetime concerns sessions, not server identity", "password rotation concerns user accounts", "state tables track connections and prove nothing"}},
	{"After a ransomware attack, which metric tells the team how much recent data the business can afford to lose?",
		"The recovery point objective value", "it measures the acceptable age of the last restorable copy",
		[3]string{"The mean time between failures", "The maximum tolerable downtime figure", "The annualized rate of occurrence"},
		[3]string{"MTBF describes hardware reliability", "the maximum downtime limits outage length rather than data loss", "ARO estimates how often an event happens"}},
	{"An auditor wants to confirm that former employees can no longer sign in. Which review should be run first?",
		"A comparison of active accounts with HR leavers", "it directly finds accounts that should have been disabled",
		[3]string{"A scan of open ports on the web servers", "A check of backup tape rotation logs", "A walkthrough of the visitor badge process"},
		[3]string{"open ports say nothing about stale accounts", "backup rotation is unrelated to sign-in rights", "visitor badges cover physical access for guests"}},
	{"Developers keep committing database passwords into the shared repository. Which control addresses the cause?",
		"A secrets manager that injects credentials at runtime", "code no longer needs to contain the passwords at all",
		[3]string{"A weekly reminder email sent to the developers", "A bigger disk for the repository server host", "A faster continuous integration build machine"},
		[3]string{"reminders do not change how credentials reach the code", "disk size has no bearing on secret handling", "build speed does not keep secrets out of commits"}},
	{"Which network design places public-facing servers between two filtering layers so that a breach stays contained?",
		"A screened subnet between two firewalls", "it separates exposed hosts from the internal network",
		[3]string{"A flat network with one shared broadcast domain", "A wireless mesh with automatic roaming enabled", "A hub that repeats every frame to each port"},
		[3]string{"a flat network lets an attacker move freely", "mesh roaming is about coverage rather than isolation", "a hub exposes all traffic to every device"}},
	{"A laptop holding customer records is stolen from a car. Which safeguard best keeps the records confidential?",
		"Full disk encryption with a pre-boot password", "the data cannot be read without the key even when the disk is removed",
		[3]string{"An asset tag glued under the laptop chassis", "A screen privacy filter on the laptop display", "An extended hardware warranty for the device"},
		[3]string{"an asset tag helps inventory but protects no data", "a privacy filter only blocks shoulder surfing", "a warranty covers repairs and not confidentiality"}},
	{"Which testing approach gives the tester full knowledge of source code and architecture before the assessment?",
		"A white box test with complete documentation", "the tester receives complete internal details in advance",
		[3]string{"A black box test from the outside only", "A blind test where staff expect nothing", "A gray box test with one user account"},
		[3]string{"black box testers start without internal knowledge", "a blind test limits what the defenders know", "gray box gives only partial knowledge"}},
	{"An organization must show regulators who accessed patient files and when. Which capability provides this?",
		"Tamper-evident audit logging of every read", "each read is recorded with the user and the time",
		[3]string{"Nightly defragmentation of the file servers", "Round-robin load balancing of the web tier", "Compression of archived documents"},
		[3]string{"defragmentation improves disk layout only", "load balancing spreads traffic and records nothing", "compression saves space but keeps no access trail"}},
}

// cleanQuestion returns item i with its key at letter key, written so that
// no lint rule fires.
func cleanQuestion(slug string, i int, key certbank.Letter) certbank.Question {
	it := cleanItems[i]
	q := certbank.Question{
		ID:            fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1),
		Certification: slug,
		Domain:        "Security Operations",
		Difficulty:    certbank.Medium,
		Tests:         it.why,
		Stem:          it.stem,
		Answer:        key,
	}
	k := key.Index()
	w := 0
	var ex strings.Builder
	fmt.Fprintf(&ex, "%s is correct because %s.", key, it.why)
	for j := range q.Options {
		if j == k {
			q.Options[j] = it.key
			continue
		}
		q.Options[j] = it.wrong[w]
		for w == 0 && len(q.Options[j]) <= len(it.key) {
			// The key must not stand out as the longest option.
			q.Options[j] += " for the whole site"
		}
		fmt.Fprintf(&ex, " %s is wrong because %s.", certbank.Letters[j], it.whyNot[w])
		w++
	}
	q.Explanation = ex.String()
	return q
}

// lintBank is a content tree for Lint: certification slug → questions.
type lintBank map[string][]certbank.Question

func (b lintBank) content() *generator.Content {
	c := &generator.Content{}
	for _, slug := range certbank.Slugs {
		qs, ok := b[slug]
		if !ok {
			continue
		}
		provider := map[string]string{"cissp": "SecBody", "cloudone-cloud-practitioner": "CloudOne", "pmp": "PMBody"}[slug]
		c.Certifications = append(c.Certifications, certbank.Certification{
			Slug: slug, Name: slug, Provider: provider, Status: certbank.Current,
			Domains: []certbank.Domain{{Name: "Security Operations", Weight: 100}},
		})
		for i, q := range qs {
			c.Questions = append(c.Questions, q)
			c.Sources = append(c.Sources, generator.Source{File: "content/certifications/" + slug + "/questions/q.yaml", Line: 2 + 12*i})
		}
	}
	return c
}

// cleanSet is eight clean questions of one certification with keys
// balanced across A–D and no runs.
func cleanSet(slug string) []certbank.Question {
	var qs []certbank.Question
	for i, k := range []certbank.Letter{"A", "B", "C", "D", "B", "A", "D", "C"} {
		qs = append(qs, cleanQuestion(slug, i, k))
	}
	return qs
}

func findings(c *generator.Content, rule string) []generator.Finding {
	var out []generator.Finding
	for _, f := range generator.Lint(c) {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func TestLintCleanBankHasNoFindings(t *testing.T) {
	for _, f := range generator.Lint(lintBank{"cissp": cleanSet("cissp")}.content()) {
		t.Errorf("clean bank: %s", f)
	}
}

// TestLintQuestionRules: each per-question rule fires on a bad example, at
// the question's file and line, and not on a good variant.
func TestLintQuestionRules(t *testing.T) {
	tests := []struct {
		rule      string
		bad, good func(q *certbank.Question)
	}{
		{"stem-length",
			func(q *certbank.Question) { q.Stem = "Which port?" },
			func(q *certbank.Question) { q.Stem = "Which port does HTTPS use by default on a server?" }},
		{"stem-length",
			func(q *certbank.Question) {
				q.Stem = strings.Repeat("A long scenario sentence with details. ", 16) + "Which control fits?"
			},
			func(q *certbank.Question) {
				q.Stem = strings.Repeat("A long scenario sentence with details. ", 14) + "Which control fits?"
			}},
		{"stem-focus",
			func(q *certbank.Question) {
				q.Stem = "Consider the mechanism that a web server uses to prove its identity to browsers."
			},
			func(q *certbank.Question) {
				q.Stem = "Complete the sentence. A web server proves its identity to browsers with:"
			}},
		{"superseded-reference",
			func(q *certbank.Question) {
				q.References = []string{"NIST SP 800-61 Rev. 2, Computer Security Incident Handling Guide"}
			},
			func(q *certbank.Question) {
				q.References = []string{"NIST SP 800-61 Rev. 3, Incident Response Recommendations"}
			}},
		{"superseded-reference",
			func(q *certbank.Question) { q.Explanation += " PCI DSS v4.0, requirement 3.5, says so." },
			func(q *certbank.Question) { q.Explanation += " PCI DSS v4.0.1, requirement 3.5, says so." }},
		{"superseded-reference",
			func(q *certbank.Question) {
				q.Stem = "Under ISO/IEC 27001:2013, which clause requires a statement of applicability?"
			},
			func(q *certbank.Question) {
				q.Stem = "Under ISO/IEC 27001:2022, which clause requires a statement of applicability?"
			}},
		{"negative-stem",
			func(q *certbank.Question) {
				q.Stem = "Which mechanism does not let a web server prove its identity to browsers before data is sent?"
			},
			func(q *certbank.Question) {
				q.Stem = "Which mechanism does NOT let a web server prove its identity to browsers before data is sent?"
			}},
		{"negative-stem",
			func(q *certbank.Question) {
				q.Stem = "All of these prove a server's identity to browsers except which one?"
			},
			func(q *certbank.Question) {
				q.Stem = "All of these prove a server's identity to browsers EXCEPT which one?"
			}},
		{"option-length",
			func(q *certbank.Question) { q.Options[1] = strings.Repeat("very long option text ", 10) },
			func(q *certbank.Question) { q.Options[1] = strings.Repeat("long option text ", 9) }},
		{"all-none-above",
			func(q *certbank.Question) { q.Options[3] = "All of the above" },
			func(q *certbank.Question) { q.Options[3] = "All traffic is inspected above layer four" }},
		{"all-none-above",
			func(q *certbank.Question) { q.Options[2] = "None of these" },
			func(q *certbank.Question) { q.Options[2] = "None of the ports are exposed" }},
		{"all-none-above",
			func(q *certbank.Question) { q.Options[2] = "Both A and B" },
			func(q *certbank.Question) { q.Options[2] = "Both hosts and users" }},
		{"duplicate-options",
			func(q *certbank.Question) { q.Options[2] = q.Options[1] + "." },
			func(q *certbank.Question) { q.Options[2] = "A stricter password complexity rule" }},
		{"absolute-terms",
			func(q *certbank.Question) {
				q.Options[1] = "A session cookie that never expires"
				q.Options[2] = "A password that must always rotate"
			},
			func(q *certbank.Question) {
				q.Options[0] = "A certificate that must always chain to a trusted root"
				q.Options[1] = "A session cookie that never expires"
				q.Options[2] = "A password that must always rotate"
			}},
		{"explanation-thin",
			func(q *certbank.Question) { q.Explanation = "A is correct. B, C and D are wrong." },
			func(q *certbank.Question) {}},
		{"explanation-distractor",
			func(q *certbank.Question) {
				q.Explanation = strings.Replace(q.Explanation, " C is wrong because", " Also,", 1)
			},
			func(q *certbank.Question) {
				q.Explanation = strings.Replace(q.Explanation, " C is wrong because", " Option C fails because", 1)
			}},
		{"explanation-contradicts-key",
			func(q *certbank.Question) { q.Explanation += " B is correct when cookies are involved." },
			func(q *certbank.Question) {
				q.Explanation += " Cookies are correct for sessions, as B suggests, but not here."
			}},
		{"clang",
			func(q *certbank.Question) {
				q.Options[q.Answer.Index()] = "A server certificate signed by a trusted authority"
			},
			func(q *certbank.Question) {
				q.Options[q.Answer.Index()] = "A server certificate signed by a trusted authority"
				q.Options[(q.Answer.Index()+1)%4] = "A longer server session cookie lifetime"
			}},
		{"option-form",
			func(q *certbank.Question) { q.Options[(q.Answer.Index()+1)%4] = "Rotate every password each week" },
			func(q *certbank.Question) { q.Options[(q.Answer.Index()+1)%4] = "A weekly rotation of every password" }},
		{"option-form",
			func(q *certbank.Question) {
				for i := range q.Options {
					q.Options[i] = [4]string{"Install a signed certificate", "Lengthen the cookie lifetime", "Rotate the passwords weekly", "A bigger firewall state table"}[i]
				}
			},
			func(q *certbank.Question) {
				for i := range q.Options {
					// A word that is not a known verb proves nothing.
					q.Options[i] = [4]string{"Install a signed certificate", "Lengthen the cookie lifetime", "Rotate the passwords weekly", "Firewall state tables enlarged"}[i]
				}
			}},
		{"calibration",
			func(q *certbank.Question) {
				q.Difficulty = certbank.Easy
				q.Calibrations = []certbank.Calibration{{Rater: "r1", Difficulty: certbank.Hard, Level: certbank.Analyse, Date: "2026-11-25"}}
			},
			func(q *certbank.Question) {
				q.Difficulty = certbank.Easy
				q.Calibrations = []certbank.Calibration{{Rater: "r1", Difficulty: certbank.Medium, Level: certbank.Apply, Date: "2026-11-25"}}
			}},
		{"calibration",
			func(q *certbank.Question) {
				q.Difficulty = certbank.Hard
				q.Calibrations = []certbank.Calibration{{Rater: "r1", Difficulty: certbank.Medium, Level: certbank.Analyse, Date: "2026-11-25"}}
			},
			func(q *certbank.Question) {
				q.Difficulty = certbank.Hard
				q.Calibrations = []certbank.Calibration{{Rater: "r1", Difficulty: certbank.Hard, Level: certbank.Analyse, Date: "2026-11-25"}}
			}},
		{"calibration",
			func(q *certbank.Question) {
				q.Calibrations = []certbank.Calibration{{Rater: "r1", Difficulty: certbank.Medium, Level: certbank.Recall, Date: "2026-11-25"}}
			},
			func(q *certbank.Question) {
				q.Difficulty = certbank.Easy
				q.Calibrations = []certbank.Calibration{{Rater: "r1", Difficulty: certbank.Easy, Level: certbank.Recall, Date: "2026-11-25"}}
			}},
		{"vendor-name",
			func(q *certbank.Question) {
				q.Certification = "cloudone-cloud-practitioner"
				q.Stem = "A team stores backups in an Amazon S3 bucket. Which setting keeps old versions of each object?"
			},
			func(q *certbank.Question) {
				q.Certification = "cloudone-cloud-practitioner"
				q.Stem = "A team stores backups in an object storage bucket. Which setting keeps old versions of each object?"
			}},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.rule, i), func(t *testing.T) {
			build := func(f func(q *certbank.Question)) *generator.Content {
				qs := cleanSet("cissp")
				f(&qs[0])
				if qs[0].Certification != "cissp" {
					// Move the question to its own certification.
					slug := qs[0].Certification
					return lintBank{"cissp": qs[1:], slug: qs[:1]}.content()
				}
				return lintBank{"cissp": qs}.content()
			}
			c := build(tt.bad)
			bad := findings(c, tt.rule)
			if len(bad) == 0 {
				t.Errorf("%s did not fire on the bad example", tt.rule)
			}
			// The changed question comes first in every bank built here.
			at := fmt.Sprintf("%s:%d: ", c.Sources[0].File, c.Sources[0].Line)
			for _, f := range bad {
				if !strings.HasPrefix(f.String(), at) {
					t.Errorf("finding %s, want it at %s", f, at)
				}
			}
			if good := findings(build(tt.good), tt.rule); len(good) > 0 {
				t.Errorf("%s fired on the good example: %v", tt.rule, good)
			}
		})
	}
}

// TestLintCertificationRules: the per-certification rules fire on a bad
// key pattern and not on the balanced clean set.
func TestLintCertificationRules(t *testing.T) {
	withKeys := func(keys string) []certbank.Question {
		var qs []certbank.Question
		for i, k := range keys {
			qs = append(qs, cleanQuestion("cissp", i, certbank.Letter(k)))
		}
		return qs
	}
	longestKey := func(n int) []certbank.Question {
		qs := cleanSet("cissp")
		for i := 0; i < n; i++ {
			k := qs[i].Answer.Index()
			qs[i].Options[k] += " and the documented procedure that supports it"
		}
		return qs
	}
	tests := []struct {
		rule      string
		bad, good []certbank.Question
		at        string
	}{
		// 3 of 8 (38%) keys are the longest option; 2 of 8 (25%) is fine.
		{"key-longest", longestKey(3), longestKey(2), "content/certifications/cissp/certification.yaml:1: "},
		// A is the key of 4 of 8 (50%) and D of none; 2 each is 25%.
		{"answer-balance", withKeys("AABACABC"), withKeys("ABCDBADC"), "content/certifications/cissp/certification.yaml:1: "},
		{"answer-balance", withKeys("ABCBCBCB"), withKeys("ABCDDCBA"), "content/certifications/cissp/certification.yaml:1: "},
		// The fourth B in a row (question 5, line 2+12*4) starts a run.
		{"key-run", withKeys("ABBBBCDA"), withKeys("ABBBCBDA"), "content/certifications/cissp/questions/q.yaml:50: "},
		// From 200 questions on each letter must be 20–30 %: 62 of 200 A (31 %) fails, 60 (30 %) passes.
		{"answer-balance", largeBank(62, 46, 46, 46), largeBank(60, 40, 50, 50), "content/certifications/cissp/certification.yaml:1: "},
		// Two questions whose tests lines differ only in case and punctuation, or share most words.
		{"duplicate-tests", withTests("Residual risk is what remains after controls", "residual risk is what remains, after controls!"),
			withTests("Residual risk is what remains after controls", "Inherent risk is the exposure before any control"), "content/certifications/cissp/questions/q.yaml:14: "},
		{"duplicate-tests", withTests("Recovery point objective bounds acceptable data loss", "Recovery point objective bounds the acceptable data loss window"),
			withTests("Recovery point objective bounds acceptable data loss", "Recovery time objective bounds acceptable downtime"), "content/certifications/cissp/questions/q.yaml:14: "},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.rule, i), func(t *testing.T) {
			bad := findings(lintBank{"cissp": tt.bad}.content(), tt.rule)
			if len(bad) == 0 {
				t.Errorf("%s did not fire on the bad example", tt.rule)
			}
			for _, f := range bad {
				if !strings.HasPrefix(f.String(), tt.at) {
					t.Errorf("finding %s, want it at %s", f, tt.at)
				}
			}
			if good := findings(lintBank{"cissp": tt.good}.content(), tt.rule); len(good) > 0 {
				t.Errorf("%s fired on the good example: %v", tt.rule, good)
			}
		})
	}
}

// largeBank is 200 clean questions whose keys are a As, b Bs, c Cs and d
// Ds, spread so that no letter runs four times.
func largeBank(a, b, c, d int) []certbank.Question {
	left := map[certbank.Letter]int{"A": a, "B": b, "C": c, "D": d}
	var qs []certbank.Question
	for i := 0; len(qs) < a+b+c+d; i++ {
		l := certbank.Letters[i%4]
		if left[l] == 0 {
			continue
		}
		left[l]--
		q := cleanQuestion("cissp", len(qs)%len(cleanItems), l)
		q.ID = fmt.Sprintf("00000000-0000-4000-8000-%012d", len(qs)+1)
		q.Tests = fmt.Sprintf("Fact number %d of the large bank", len(qs))
		qs = append(qs, q)
	}
	return qs
}

// withTests is the clean set with the first two tests lines replaced.
func withTests(first, second string) []certbank.Question {
	qs := cleanSet("cissp")
	qs[0].Tests, qs[1].Tests = first, second
	return qs
}

// TestLintExamRetired: a retiring exam whose retirement date is on or before
// exam_currency_verified must target its successor.
func TestLintExamRetired(t *testing.T) {
	for _, tt := range []struct {
		date string
		want bool
	}{{"2026-06-30", true}, {"2026-11-25", true}, {"2026-11-26", false}} {
		c := lintBank{"cissp": cleanSet("cissp")}.content()
		c.Site.ExamCurrencyVerified = "2026-11-25"
		cert := &c.Certifications[0]
		cert.Status, cert.ExamCode, cert.RetirementDate, cert.Successor = certbank.Retiring, "OLD-100", tt.date, "NEW-200"
		got := findings(c, "exam-retired")
		if (len(got) > 0) != tt.want {
			t.Errorf("retirement %s: findings %v, want any: %v", tt.date, got, tt.want)
		}
		for _, f := range got {
			if want := "content/certifications/cissp/certification.yaml:1: OLD-100 retired on " + tt.date; !strings.HasPrefix(f.String(), want) || !strings.Contains(f.String(), "NEW-200") {
				t.Errorf("finding %s, want %s… naming the successor", f, want)
			}
		}
	}
}

// TestLintNearDuplicates: a question that nearly repeats one of another
// certification is reported at the later one; distinct questions are not.
func TestLintNearDuplicates(t *testing.T) {
	a := cleanSet("cissp")
	b := cleanSet("pmp")
	for i := range b {
		b[i].ID = fmt.Sprintf("11111111-0000-4000-8000-%012d", i+1)
	}
	// pmp's questions share no text with cissp's but one.
	for i := range b {
		b[i].Stem = fmt.Sprintf("Project scenario %d: which planning artifact records the agreed scope baseline for phase %d of the rollout?", i, i*7)
		b[i].Options[b[i].Answer.Index()] = fmt.Sprintf("The scope statement of phase %d", i*7)
	}
	good := lintBank{"cissp": a, "pmp": b}.content()
	if f := findings(good, "duplicate-question"); len(f) > 0 {
		t.Errorf("distinct banks: %v", f)
	}
	b[3].Stem = a[5].Stem + " "
	b[3].Options[b[3].Answer.Index()] = a[5].Options[a[5].Answer.Index()]
	bad := findings(lintBank{"cissp": a, "pmp": b}.content(), "duplicate-question")
	if len(bad) != 1 {
		t.Fatalf("findings %v, want one near duplicate", bad)
	}
	want := "content/certifications/pmp/questions/q.yaml:38: question " + b[3].ID + " nearly repeats " + a[5].ID + " (content/certifications/cissp/questions/q.yaml:62)"
	if !strings.HasPrefix(bad[0].String(), want) {
		t.Errorf("finding %s\nwant %s…", bad[0], want)
	}
}

// TestLintClangVocabularyStable: a word that more than twenty stems of a
// certification use is its vocabulary whatever its size, so new questions
// never turn an older key that echoes it into a cue; a rarer word stays one.
func TestLintClangVocabularyStable(t *testing.T) {
	bank := func(n, withWord int) *generator.Content {
		var qs []certbank.Question
		for i := range n {
			q := cleanQuestion("cissp", i%len(cleanItems), certbank.Letters[i%4])
			q.ID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)
			q.Tests = fmt.Sprintf("%s (%d)", q.Tests, i)
			if i < withWord {
				q.Stem = strings.TrimSuffix(q.Stem, "?") + " on the ledger cluster?"
			}
			qs = append(qs, q)
		}
		qs[0].Options[qs[0].Answer.Index()] = "A certificate on the ledger signed by a trusted authority"
		return lintBank{"cissp": qs}.content()
	}
	for _, tt := range []struct{ n, withWord, want int }{
		{160, 24, 0}, // 15 % of the stems: vocabulary
		{400, 24, 0}, // 6 %, but more than twenty stems: still vocabulary
		{400, 10, 1}, // ten stems: a cue
		{60, 3, 1},
	} {
		if got := len(findings(bank(tt.n, tt.withWord), "clang")); got != tt.want {
			t.Errorf("%d questions, %d stems with the word: %d clang finding(s), want %d", tt.n, tt.withWord, got, tt.want)
		}
	}
}

package certbank

// ExamStatus says whether an exam version is current or announced to retire.
type ExamStatus string

// The exam statuses of SPEC.md §2.6.
const (
	Current  ExamStatus = "current"
	Retiring ExamStatus = "retiring"
)

// Domain is one area of an exam's published blueprint.
type Domain struct {
	Name   string `json:"name,omitempty"`
	Weight int    `json:"weight,omitempty"` // percent of the exam
}

// Certification is one exam that the bank covers.
type Certification struct {
	Slug           string     `json:"slug,omitempty"`
	Name           string     `json:"name,omitempty"`
	Provider       string     `json:"provider,omitempty"`
	ExamCode       string     `json:"exam_code,omitempty"`
	Status         ExamStatus `json:"status,omitempty"`
	RetirementDate string     `json:"retirement_date,omitempty"` // YYYY-MM-DD, retiring exams only
	Successor      string     `json:"successor,omitempty"`       // retiring exams only
	ExamNote       string     `json:"exam_note,omitempty"`       // retiring exams only
	ExamMinutes    int        `json:"exam_minutes,omitempty"`
	ExamQuestions  int        `json:"exam_questions,omitempty"`
	PassingScore   string     `json:"passing_score,omitempty"`
	Summary        string     `json:"summary,omitempty"`
	Domains        []Domain   `json:"domains,omitempty"`
}

// HasDomain reports whether name is one of the certification's domains.
func (c *Certification) HasDomain(name string) bool {
	for _, d := range c.Domains {
		if d.Name == name {
			return true
		}
	}
	return false
}

// Slugs are the 26 certification slugs of SPEC.md §2.1, in its order.
var Slugs = []string{
	"cloudone-ai-practitioner", "cloudone-cloud-practitioner", "cloudone-solutions-architect",
	"cloudone-solutions-architect-pro", "cloudtwo-administrator", "cloudtwo-ai-fundamentals",
	"cloudtwo-security-engineer", "cloudtwo-solutions-architect", "vendorfive-ccna", "cissp",
	"vendorfour-a-plus-core1", "vendorfour-a-plus-core2", "vendorfour-cysa-plus",
	"vendorfour-network-plus", "vendorfour-pentest-plus", "vendorfour-security-plus",
	"cloudthree-cloud-architect", "cloudthree-digital-leader", "cloudthree-ml-engineer",
	"orchestrator-cka", "orchestrator-ckad", "pmbody-capm", "pmp", "crmvendor-admin",
	"scrum-psm1", "iac-associate",
}

// KnownSlug reports whether s is one of Slugs.
func KnownSlug(s string) bool {
	for _, k := range Slugs {
		if k == s {
			return true
		}
	}
	return false
}

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
	Name       string      `json:"name,omitempty"`
	Weight     int         `json:"weight,omitempty"` // percent of the exam
	Objectives []Objective `json:"objectives,omitempty"`
}

// Objective is one numbered objective of an exam guide, e.g. "3.2 Given a
// scenario, apply security principles to secure enterprise infrastructure".
type Objective struct {
	Code string `json:"code"` // as the guide numbers it, e.g. "3.2"; unique within a certification
	Name string `json:"name"` // as the guide words it, with neutral provider words
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
	// TargetQuestions is how many questions the bank aims at for this
	// certification (site.yaml's target_questions unless overridden).
	TargetQuestions int `json:"target_questions,omitempty"`
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

// Domain returns the domain called name.
func (c *Certification) Domain(name string) (*Domain, bool) {
	for i := range c.Domains {
		if c.Domains[i].Name == name {
			return &c.Domains[i], true
		}
	}
	return nil, false
}

// Objective returns the objective with the given code and the domain it
// belongs to.
func (c *Certification) Objective(code string) (Objective, *Domain, bool) {
	for i := range c.Domains {
		for _, o := range c.Domains[i].Objectives {
			if o.Code == code {
				return o, &c.Domains[i], true
			}
		}
	}
	return Objective{}, nil, false
}

// Objectives counts the certification's objectives.
func (c *Certification) Objectives() int {
	n := 0
	for _, d := range c.Domains {
		n += len(d.Objectives)
	}
	return n
}

// Weights returns the domain weights in blueprint order.
func (c *Certification) Weights() []int {
	w := make([]int, len(c.Domains))
	for i, d := range c.Domains {
		w[i] = d.Weight
	}
	return w
}

// Allocate splits total in proportion to weights by the largest remainder
// method: each share is the floor of its exact quota, and the units left
// go to the largest remainders (ties to the earlier weight). The shares add
// up to total whenever some weight is positive.
func Allocate(total int, weights []int) []int {
	out := make([]int, len(weights))
	sum := 0
	for _, w := range weights {
		sum += max(w, 0)
	}
	if sum == 0 || total <= 0 {
		return out
	}
	rem := make([]int, len(weights)) // remainders in units of 1/sum
	given := 0
	for i, w := range weights {
		w = max(w, 0)
		out[i] = total * w / sum
		rem[i] = total*w - out[i]*sum
		given += out[i]
	}
	for given < total {
		best := -1
		for i := range rem {
			if weights[i] > 0 && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
		}
		out[best]++
		rem[best] = -1
		given++
	}
	return out
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

package verify

import (
	"fmt"
	"os"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

// Counts says what was recorded.
type Counts struct {
	Answers          int      // answers recorded (new, replaced or unchanged)
	Agree, Disagree  int      // of those, how many chose the stored answer, and how many another
	Added, Replaced  int      // new entries, and entries of the same solver replaced
	Unchanged        int      // entries that were already recorded exactly so
	OverridesDropped []string // ids whose override was dropped because the solver's answer changed
	Files            []string // question files written
}

func (c *Counts) add(r recorded) {
	c.Added += r.added
	c.Replaced += r.replaced
	c.Unchanged += r.unchanged
	c.Files = appendNew(c.Files, r.files...)
}

func appendNew(xs []string, ys ...string) []string {
	for _, y := range ys {
		found := false
		for _, x := range xs {
			found = found || x == y
		}
		if !found {
			xs = append(xs, y)
		}
	}
	return xs
}

// Import records the answers on the filled sheets (JSON, CSV or text) at paths as
// verification entries of solver, dated date (today when empty). A solver's
// earlier entry on a question is replaced, so importing a sheet twice
// changes nothing the second time; a reviewed override stays when the
// answer is the same.
//
// Every sheet is checked before anything is written: an unknown or
// duplicated id, a question or option text that differs from the bank
// (whitespace aside), or a missing or invalid answer refuses the import with
// generator.Problems naming each sheet line, and no file changes.
func (b *Bank) Import(solver, date string, paths ...string) (Counts, error) {
	date, err := b.beginImport("solver", solver, date)
	if err != nil {
		return Counts{}, err
	}

	var probs generator.Problems
	bad := func(file string, line int, format string, args ...any) {
		probs = append(probs, generator.Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	var entries []entry
	var counts Counts
	seen := map[string]string{} // id → file:line of its first row
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			bad(p, 0, "cannot read the sheet: %v", err)
			continue
		}
		s, err := ReadSheet(p, data)
		if err != nil {
			probs = append(probs, err.(generator.Problems)...)
			continue
		}
		sheetCert := s.Certification
		if sheetCert != "" && b.content.Certification(sheetCert) == nil {
			bad(p, 0, "the sheet is for certification %q, which is not in the bank", sheetCert)
			sheetCert = ""
		}
		for _, r := range s.Questions {
			at := fmt.Sprintf("%s:%d", p, r.Line)
			if first, dup := seen[r.ID]; dup {
				bad(p, r.Line, "question %s appears again (first at %s); keep one answer per question", r.ID, first)
				continue
			}
			seen[r.ID] = at
			q, _, ok := b.question(r.ID)
			if !ok {
				bad(p, r.Line, "unknown question id %q; the sheet does not match the bank, export a new one with certbank verify sheet", r.ID)
				continue
			}
			if sheetCert != "" && q.Certification != sheetCert {
				bad(p, r.Line, "question %s belongs to %s, not to the sheet's certification %s", r.ID, q.Certification, sheetCert)
			}
			checkItem(p, r.TextLine(), r.Item, q, bad)
			if r.Answer == "" {
				bad(p, r.Line, "question %s has no answer; write A, B, C or D", r.ID)
				continue
			}
			l, err := certbank.ParseLetter(r.Answer)
			if err != nil {
				bad(p, r.Line, "question %s: answer %q is not one of A, B, C, D", r.ID, r.Answer)
				continue
			}
			v := certbank.Verification{Solver: solver, Answer: l, Date: date}
			for _, old := range q.Verifications {
				if old.Solver != solver {
					continue
				}
				if old.Override != "" && old.Answer == l {
					v.Override = old.Override
				} else if old.Override != "" {
					counts.OverridesDropped = append(counts.OverridesDropped, q.ID)
				}
				break
			}
			entries = append(entries, verificationEntry(q.ID, v))
			if l == q.Answer {
				counts.Agree++
			} else {
				counts.Disagree++
			}
		}
	}
	if len(probs) > 0 {
		return Counts{}, probs
	}
	r, err := b.record(entries)
	if err != nil {
		return Counts{}, err
	}
	counts.Answers = len(entries)
	counts.add(r)
	return counts, nil
}

// checkItem reports (through bad, at file:line) where the item a sheet
// shows differs from question q as the bank has it now.
func checkItem(file string, line int, it Item, q *certbank.Question, bad func(file string, line int, format string, args ...any)) {
	want := itemOf(q)
	if normalize(it.Question) != want.Question {
		bad(file, line, "question %s: the question text differs from the bank; the sheet was edited or the question changed since export, export a new sheet", it.ID)
	}
	for _, l := range certbank.Letters {
		if normalize(it.Options.Get(l)) != want.Options.Get(l) {
			bad(file, line, "question %s: option %s differs from the bank; the sheet was edited or the question changed since export, export a new sheet", it.ID, l)
		}
	}
}

// beginImport checks who recorded a sheet (kind: "solver" or "rater") and
// the date (today when empty), and reloads the content, so that an import
// checks its sheets against the files as they are now. It returns the date.
func (b *Bank) beginImport(kind, name, date string) (string, error) {
	if date == "" {
		date = today()
	}
	if err := checkName(kind, name); err != nil {
		return "", err
	}
	if err := checkDate(date); err != nil {
		return "", err
	}
	c, err := b.load(nil)
	if err != nil {
		return "", err
	}
	b.setContent(c)
	return date, nil
}

package verify

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

// RatingSheet is a calibration sheet: questions of one certification with
// their keys, for a rater who knows the exam to rate how hard each is and
// what it asks for, without seeing the difficulty label (nor the objective,
// tests line, verification or calibration entries). It is a text sheet whose
// RATINGS block the rater fills in.
type RatingSheet struct {
	Certification string
	Exam          string // the exam's name and code, as the sheet shows them
	Questions     []RatingRow
	// Batch and Batches say which part of a split sheet this is; zero for a
	// whole sheet.
	Batch, Batches int
}

// RatingRow is one question of a rating sheet and what the rater wrote.
type RatingRow struct {
	Item
	Key    certbank.Letter
	Rating string // "<difficulty> <level>" as written
	Line   int    // of its RATINGS line in a read sheet
	// ItemLine is where the sheet shows the question.
	ItemLine int
}

// RatingSheet returns the rating sheet of certification slug, in bank
// order. With unratedBy set it leaves out the questions that rater has
// rated.
func (b *Bank) RatingSheet(slug, unratedBy string) (*RatingSheet, error) {
	if err := b.certification(slug); err != nil {
		return nil, err
	}
	cert := b.content.Certification(slug)
	exam := cert.Name
	if cert.ExamCode != "" {
		exam += ", exam code " + cert.ExamCode
	}
	s := &RatingSheet{Certification: slug, Exam: exam}
	for i := range b.content.Questions {
		q := &b.content.Questions[i]
		if q.Certification != slug || unratedBy != "" && ratedBy(q, unratedBy) {
			continue
		}
		s.Questions = append(s.Questions, RatingRow{Item: itemOf(q), Key: q.Answer})
	}
	return s, nil
}

// ratedBy reports whether rater has a calibration entry on q.
func ratedBy(q *certbank.Question, rater string) bool {
	for _, c := range q.Calibrations {
		if c.Rater == rater {
			return true
		}
	}
	return false
}

// Split returns the sheet as batches of at most n questions each, in order,
// numbered from 1; none when the sheet has no questions.
func (s *RatingSheet) Split(n int) []*RatingSheet {
	parts := split(s.Questions, n)
	out := make([]*RatingSheet, len(parts))
	for i, p := range parts {
		b := *s
		b.Questions, b.Batch, b.Batches = p, i+1, len(parts)
		out[i] = &b
	}
	return out
}

// Write writes the sheet as text.
func (s *RatingSheet) Write(w io.Writer) error {
	var tw textWriter
	tw.header("CERTBANK RATING SHEET", s.Certification, s.Exam, s.Batch, s.Batches, len(s.Questions))
	tw.line("How to rate")
	tw.para(2, "", `Rate every question on your own, for a candidate who is ready for this exam: how
		hard it is (easy, medium or hard) and what it asks the candidate to do (recall, apply
		or analyse). Each question shows its key, the correct option. Write the two words
		after the question's id in the RATINGS block at the end of this file, so that each
		line reads "<id>: <easy|medium|hard> <recall|apply|analyse>".`, false)
	tw.line("")
	for _, r := range []struct{ word, means string }{
		{"easy", "recall or recognise one fact, term or rule, or apply it in a one-step situation"},
		{"medium", "apply a concept to a realistic scenario with one deciding constraint: choose the action, tool, setting or diagnosis"},
		{"hard", "a scenario with several constraints where two or three options would work technically and one is best under the constraints stated (cost, overhead, least privilege, order of actions, a regulation, a deadline)"},
		{"", ""},
		{"recall", "remember a fact, a term, a definition"},
		{"apply", "use a concept in a given situation: choose an action, a tool, a setting"},
		{"analyse", "weigh constraints, diagnose, compare designs, order steps"},
	} {
		if r.word == "" {
			tw.line("")
			continue
		}
		tw.para(2, fmt.Sprintf("%-9s", r.word), r.means, true)
	}
	tw.line("")
	tw.para(2, "", `Change nothing else: leave the ids, questions, options and keys as they are, and
		add or remove no lines in RATINGS. Return the filled file to the operator, who records
		it with`, false)
	tw.line(`    certbank verify rate-import --rater "<who rated, honestly described>" FILE`)
	tw.line("")
	ids, ratings := make([]string, len(s.Questions)), make([]string, len(s.Questions))
	for i, r := range s.Questions {
		ids[i], ratings[i] = r.ID, r.Rating
		tw.item(i+1, len(s.Questions), r.Item)
		tw.line("  Key: %s", r.Key)
		tw.line("")
	}
	tw.block(ratingsBlock, ids, ratings)
	_, err := w.Write(tw.buf.Bytes())
	return err
}

// ReadRatingSheet reads a filled rating sheet. name is how the file is
// named in problems. A sheet that cannot be read returns generator.Problems
// with file:line: every problem of its shape (a question without its
// RATINGS line, an id repeated or not on the sheet, a line that is not
// "<id>: <difficulty> <level>").
func ReadRatingSheet(name string, data []byte) (*RatingSheet, error) {
	t, probs := readText(name, data, ratingsBlock)
	if probs != nil {
		return nil, probs
	}
	s := &RatingSheet{Certification: t.certification}
	for _, r := range t.rows {
		s.Questions = append(s.Questions, RatingRow{Item: r.item, Key: certbank.Letter(strings.ToUpper(r.key)), Rating: r.value, Line: r.line, ItemLine: r.textItem.line})
	}
	return s, nil
}

// ParseRating reads "<difficulty> <level>", e.g. "medium apply": the two
// words in either order, in any case, separated by spaces, a comma or a
// slash.
func ParseRating(s string) (certbank.Difficulty, certbank.Level, error) {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '/' })
	var d certbank.Difficulty
	var l certbank.Level
	for _, w := range words {
		if x, err := certbank.ParseDifficulty(w); err == nil && d == "" {
			d = x
		} else if y, err := certbank.ParseLevel(w); err == nil && l == "" {
			l = y
		} else {
			d = ""
			break
		}
	}
	if len(words) != 2 || d == "" || l == "" {
		return "", "", certbank.Errorf(certbank.Invalid, "%q is not <easy|medium|hard> <recall|apply|analyse>, e.g. \"medium apply\"", s)
	}
	return d, l, nil
}

// RatingCounts says what RateImport recorded.
type RatingCounts struct {
	Ratings         int      // ratings recorded (new, replaced or unchanged)
	Added, Replaced int      // new entries, and entries of the same rater replaced
	Unchanged       int      // entries that were already recorded exactly so
	Miscalibrated   []string // ids whose rating contradicts the label (certbank lint --strict fails on them)
	Files           []string // question files written
}

// RateImport records the ratings on the filled rating sheets at paths as
// calibration entries {rater, difficulty, level, date} of rater, dated date
// (today when empty). A rater's earlier entry on a question is replaced.
//
// Every sheet is checked before anything is written: a question without its
// RATINGS line, an id repeated, not on the sheet or unknown to the bank, a
// question, option or key that differs from the bank, or a missing or
// invalid rating refuses the import with generator.Problems naming each
// sheet line and question, and no file changes.
func (b *Bank) RateImport(rater, date string, paths ...string) (RatingCounts, error) {
	date, err := b.beginImport("rater", rater, date)
	if err != nil {
		return RatingCounts{}, err
	}

	var probs generator.Problems
	bad := func(file string, line int, format string, args ...any) {
		probs = append(probs, generator.Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	var entries []entry
	var counts RatingCounts
	seen := map[string]string{} // id → file:line of its first row
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			bad(p, 0, "cannot read the sheet: %v", err)
			continue
		}
		s, err := ReadRatingSheet(p, data)
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
			if first, dup := seen[r.ID]; dup {
				bad(p, r.Line, "question %s appears again (first at %s); keep one rating per question", r.ID, first)
				continue
			}
			seen[r.ID] = fmt.Sprintf("%s:%d", p, r.Line)
			q, _, ok := b.question(r.ID)
			if !ok {
				bad(p, r.Line, "unknown question id %q; the sheet does not match the bank, export a new one with certbank verify rate-sheet", r.ID)
				continue
			}
			if sheetCert != "" && q.Certification != sheetCert {
				bad(p, r.Line, "question %s belongs to %s, not to the sheet's certification %s", r.ID, q.Certification, sheetCert)
			}
			checkItem(p, r.ItemLine, r.Item, q, bad)
			if r.Key != q.Answer {
				bad(p, r.ItemLine, "question %s: the sheet shows the key %q, the bank has %s; the sheet was edited or the question changed since export, export a new sheet", r.ID, r.Key, q.Answer)
			}
			if strings.TrimSpace(r.Rating) == "" {
				bad(p, r.Line, "question %s has no rating; write <easy|medium|hard> <recall|apply|analyse> after %q", r.ID, r.ID+":")
				continue
			}
			d, l, err := ParseRating(r.Rating)
			if err != nil {
				bad(p, r.Line, "question %s: the rating %v", r.ID, err)
				continue
			}
			cal := certbank.Calibration{Rater: rater, Difficulty: d, Level: l, Date: date}
			entries = append(entries, calibrationEntry(q.ID, cal))
			if contradicts(cal, q) {
				counts.Miscalibrated = append(counts.Miscalibrated, q.ID)
			}
		}
	}
	if len(probs) > 0 {
		return RatingCounts{}, probs
	}
	r, err := b.record(entries)
	if err != nil {
		return RatingCounts{}, err
	}
	counts.Ratings = len(entries)
	counts.Added, counts.Replaced, counts.Unchanged = r.added, r.replaced, r.unchanged
	counts.Files = r.files
	return counts, nil
}

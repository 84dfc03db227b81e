package verify

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
)

// Text sheets are plain text a person reads and fills in with any editor:
// a header that says how to fill them in, each question under a line
// "Question N of M (id ID)" with its stem and options "A) ..." (and, on
// rating sheets, "Key: L"), and at the end a block of one "ID: " line per
// question, under the line ANSWERS (answer sheets) or RATINGS (rating
// sheets), which is the only part the person writes in.

// The block names of the two kinds of text sheet.
const (
	answersBlock = "ANSWERS"
	ratingsBlock = "RATINGS"
)

// textWidth is the width text sheets are wrapped to.
const textWidth = 88

// textHeadRE matches the line that starts a question on a text sheet:
// "Question N of M (id ID)", or "=== ID ..." as on the sheets of the
// bootstrap (content/verification/solver-d).
var textHeadRE = regexp.MustCompile(`(?i)^(?:question\b.*\(id:?\s*([^\s()]+)\)|===\s*([^\s()]+)(?:\s.*)?)$`)

// textOptionRE matches the line that starts an option on a text sheet:
// "A) text", or "A. text" as on the bootstrap sheets.
var textOptionRE = regexp.MustCompile(`^([A-D])(?:\)\s*|\.\s+)(.*)$`)

// textKeyRE matches the key line of a question on a rating sheet.
var textKeyRE = regexp.MustCompile(`(?i)^key:\s*(.*)$`)

// textWriter collects the lines of a text sheet.
type textWriter struct {
	buf bytes.Buffer
}

func (w *textWriter) line(format string, args ...any) {
	fmt.Fprintf(&w.buf, format, args...)
	w.buf.WriteByte('\n')
}

// para writes s wrapped to textWidth, every line indented by in, the first
// one starting with first, the others indented by len(first) more when hang
// is set.
func (w *textWriter) para(in int, first, s string, hang bool) {
	prefix := strings.Repeat(" ", in) + first
	next := strings.Repeat(" ", in)
	if hang {
		next += strings.Repeat(" ", len(first))
	}
	line := prefix
	empty := true
	for _, word := range strings.Fields(s) {
		if !empty && len(line)+1+len(word) > textWidth {
			w.line("%s", line)
			line, empty = next, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	w.line("%s", line)
}

// header writes the first lines of a text sheet.
func (w *textWriter) header(title, slug, exam string, batch, batches, n int) {
	w.line("%s", title)
	w.line("Certification: %s", slug)
	if exam != "" {
		w.line("Exam: %s", exam)
	}
	if batches > 0 {
		w.line("Batch: %d of %d (%s)", batch, batches, plural(n, "question"))
	} else {
		w.line("Questions: %d", n)
	}
	w.line("")
}

// item writes one question: its head line, stem and options.
func (w *textWriter) item(i, n int, it Item) {
	w.line("Question %d of %d (id %s)", i, n, it.ID)
	w.line("")
	w.para(2, "", it.Question, false)
	w.line("")
	for _, l := range certbank.Letters {
		w.para(2, string(l)+") ", it.Options.Get(l), true)
	}
}

// block writes the block the person fills in: one "<id>: <value>" line per
// question, the values empty on a blank sheet.
func (w *textWriter) block(name string, ids, values []string) {
	w.line("%s", name)
	for i, id := range ids {
		w.line("%s: %s", id, values[i])
	}
}

// writeText writes s as a text answer sheet.
func (s *Sheet) writeText(w *textWriter) {
	w.header("CERTBANK ANSWER SHEET", s.Certification, "", s.Batch, s.Batches, len(s.Questions))
	w.line("How to answer")
	w.para(2, "", `Answer every question on your own: do not look anything up in the question bank or
		ask anyone. Choose the single best option of each question and write its letter (A, B,
		C or D) after the question's id in the ANSWERS block at the end of this file, so that
		each line reads "<id>: <letter>".`, false)
	w.line("")
	w.para(2, "", `Write nothing else and change nothing else: leave the ids, questions and options as
		they are, and add or remove no lines in ANSWERS. Return the filled file to the operator,
		who records it with`, false)
	w.line(`    certbank verify import --solver "<who answered, honestly described>" FILE`)
	w.line("")
	ids, answers := make([]string, len(s.Questions)), make([]string, len(s.Questions))
	for i, r := range s.Questions {
		ids[i], answers[i] = r.ID, r.Answer
		w.item(i+1, len(s.Questions), r.Item)
		w.line("")
	}
	w.block(answersBlock, ids, answers)
}

// textItem is a question as a text sheet shows it.
type textItem struct {
	line int // of its head line
	item Item
	key  string // the "Key:" line's value (rating sheets)
}

// textRow is a question of a text sheet and what the person wrote for it in
// the block.
type textRow struct {
	textItem
	value string // after "ID:" in the block, trimmed
	line  int    // of the block line
}

// textSheet is a parsed text sheet.
type textSheet struct {
	block         string // answersBlock or ratingsBlock
	certification string
	rows          []textRow // in block order
}

// isTextSheet reports whether data looks like a text sheet: its first
// non-blank line starts with CERTBANK, or it has a block line (blockHead).
func isTextSheet(data []byte) bool {
	first := true
	for _, l := range textLines(data) {
		t := strings.TrimSpace(l)
		if first && t != "" {
			if strings.HasPrefix(strings.ToUpper(t), "CERTBANK") {
				return true
			}
			first = false
		}
		if blockHead(l) != "" {
			return true
		}
	}
	return false
}

func textLines(data []byte) []string {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// blockHead returns answersBlock or ratingsBlock when line l starts that
// block: the word alone (any case), in column 0. A question's wrapped text
// is indented, and a wrapped option may end in a line that reads "answers".
func blockHead(l string) string {
	if l != strings.TrimLeft(l, " \t") {
		return ""
	}
	switch strings.ToUpper(strings.TrimSpace(l)) {
	case answersBlock:
		return answersBlock
	case ratingsBlock:
		return ratingsBlock
	}
	return ""
}

// readText parses a text sheet whose block must be want. It checks the
// sheet's shape: every question of the question section has exactly one
// line in the block and the block names no other question. Each problem
// names the file (name), the line and the question id, and says what to
// do; the values written in the block are checked by the caller.
func readText(name string, data []byte, want string) (*textSheet, generator.Problems) {
	var probs generator.Problems
	bad := func(line int, format string, args ...any) {
		probs = append(probs, generator.Problem{File: name, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	fill := `"<id>: <letter>"`
	if want == ratingsBlock {
		fill = `"<id>: <easy|medium|hard> <recall|apply|analyse>"`
	}

	s := &textSheet{}
	var items []textItem
	var cur *textItem
	var body []string // the current item's non-blank lines
	endItem := func() {
		if cur != nil {
			parseTextItem(cur, body)
			items = append(items, *cur)
		}
		cur, body = nil, nil
	}
	blockAt := 0
	type blockLine struct {
		id, value string
		line      int
	}
	var lines []blockLine
	for i, l := range textLines(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))) {
		n, t := i+1, strings.TrimSpace(l)
		if blockAt == 0 {
			if b := blockHead(l); b != "" {
				endItem()
				s.block, blockAt = b, n
				continue
			}
			if m := textHeadRE.FindStringSubmatch(t); m != nil {
				endItem()
				cur = &textItem{line: n, item: Item{ID: m[1] + m[2]}}
				continue
			}
			if cur == nil {
				if k, v, ok := strings.Cut(t, ":"); ok && strings.EqualFold(k, "certification") {
					s.certification = strings.TrimSpace(v)
				}
				continue
			}
			if t != "" {
				body = append(body, t)
			}
			continue
		}
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		id, v, ok := strings.Cut(t, ":")
		if !ok || strings.TrimSpace(id) == "" {
			bad(n, "%q is not a line of %s: write %s, one line per question", t, s.block, fill)
			continue
		}
		lines = append(lines, blockLine{strings.TrimSpace(id), strings.TrimSpace(v), n})
	}
	endItem()

	switch {
	case blockAt == 0:
		return nil, generator.Problems{{File: name, Msg: fmt.Sprintf("the sheet has no %s block (a line %s, then one %s line per question); export a new sheet and fill in its %s block", want, want, fill, want)}}
	case s.block != want && want == answersBlock:
		return nil, generator.Problems{{File: name, Line: blockAt, Msg: "this is a rating sheet (its block is RATINGS): record it with certbank verify rate-import --rater NAME FILE"}}
	case s.block != want:
		return nil, generator.Problems{{File: name, Line: blockAt, Msg: "this is an answer sheet (its block is ANSWERS): record it with certbank verify import --solver NAME FILE"}}
	case len(items) == 0 && len(lines) == 0:
		return nil, generator.Problems{{File: name, Msg: "the sheet holds no questions"}}
	}

	byID := map[string]int{} // id → index in items
	for i, it := range items {
		if j, dup := byID[it.item.ID]; dup {
			bad(it.line, "question %s appears again in the question section (first at line %d); the sheet was edited, export a new one", it.item.ID, items[j].line)
			continue
		}
		byID[it.item.ID] = i
	}
	seen := map[string]int{} // id → its first block line
	for _, l := range lines {
		if first, dup := seen[l.id]; dup {
			bad(l.line, "question %s appears again in %s (first at line %d); keep one line per question", l.id, s.block, first)
			continue
		}
		seen[l.id] = l.line
		i, ok := byID[l.id]
		if !ok {
			bad(l.line, "%s names question %s, which is not among the questions of this sheet; delete the line, or write the id as the question section shows it", s.block, l.id)
			continue
		}
		s.rows = append(s.rows, textRow{textItem: items[i], value: l.value, line: l.line})
	}
	for i, it := range items {
		if _, ok := seen[it.item.ID]; !ok && byID[it.item.ID] == i {
			bad(it.line, "question %s has no line in %s; add the line %s", it.item.ID, s.block, strings.Replace(fill, "<id>", it.item.ID, 1))
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return s, nil
}

// parseTextItem reads a question's stem, options and key from its
// non-blank lines: the stem runs up to the line "A) ...", each option up to
// the next letter's line, and a line "Key: L" ends the options.
func parseTextItem(it *textItem, lines []string) {
	var stem []string
	opts := [4][]string{}
	next := 0 // the option letter expected next
	for _, t := range lines {
		if m := textKeyRE.FindStringSubmatch(t); m != nil && next == 4 {
			it.key = strings.TrimSpace(m[1])
			continue
		}
		if m := textOptionRE.FindStringSubmatch(t); m != nil && next < 4 && m[1] == string(certbank.Letters[next]) {
			opts[next] = []string{m[2]}
			next++
			continue
		}
		if next == 0 {
			stem = append(stem, t)
		} else {
			opts[next-1] = append(opts[next-1], t)
		}
	}
	it.item.Question = normalize(strings.Join(stem, " "))
	it.item.Options = Options{
		A: normalize(strings.Join(opts[0], " ")), B: normalize(strings.Join(opts[1], " ")),
		C: normalize(strings.Join(opts[2], " ")), D: normalize(strings.Join(opts[3], " ")),
	}
}

// readTextSheet reads a text answer sheet into a Sheet.
func readTextSheet(name string, data []byte) (*Sheet, error) {
	t, probs := readText(name, data, answersBlock)
	if probs != nil {
		return nil, probs
	}
	s := &Sheet{Certification: t.certification}
	for _, r := range t.rows {
		s.Questions = append(s.Questions, Row{Item: r.item, Answer: r.value, Line: r.line, ItemLine: r.textItem.line})
	}
	return s, nil
}

// plural returns "1 question", "2 questions".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

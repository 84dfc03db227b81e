package verify

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/certbank/certbank"
	"gopkg.in/yaml.v3"
)

// questionFile is the text of one question file, edited line by line so that
// everything an edit does not touch (comments, blank lines, quoting, line
// endings) keeps its bytes. Lines keep a trailing "\r" when the file has
// CRLF line endings.
type questionFile struct {
	lines    []string
	finalEOL bool   // the file ends with a line break
	cr       string // "\r" when every line ends in CRLF, else ""
}

func parseQuestionFile(data []byte) *questionFile {
	s := string(data)
	f := &questionFile{finalEOL: strings.HasSuffix(s, "\n")}
	s = strings.TrimSuffix(s, "\n")
	f.lines = strings.Split(s, "\n")
	if n := strings.Count(s, "\n"); n > 0 && strings.Count(s, "\r\n") == n {
		f.cr = "\r"
	}
	return f
}

func (f *questionFile) bytes() []byte {
	s := strings.Join(f.lines, "\n")
	if f.finalEOL {
		s += "\n"
	}
	return []byte(s)
}

// text returns line i (0-based) without its "\r".
func (f *questionFile) text(i int) string { return strings.TrimSuffix(f.lines[i], "\r") }

// splice replaces lines [from, to) with repl.
func (f *questionFile) splice(from, to int, repl []string) {
	for i := range repl {
		repl[i] += f.cr
	}
	if to == len(f.lines) && !f.finalEOL && f.cr != "" {
		// The last line has no line break, so no "\r" either.
		switch {
		case len(repl) > 0:
			repl[len(repl)-1] = strings.TrimSuffix(repl[len(repl)-1], f.cr)
			if from == to && from > 0 {
				f.lines[from-1] += f.cr
			}
		case from > 0:
			f.lines[from-1] = strings.TrimSuffix(f.lines[from-1], f.cr)
		}
	}
	f.lines = append(f.lines[:from], append(repl, f.lines[to:]...)...)
}

// lastLine returns the last line (0-based) of the block that starts on line
// start and continues on every following line indented by at least
// minIndent columns. Blank lines and less indented comments in between do
// not end the block, but are not part of it when nothing follows them.
func (f *questionFile) lastLine(start, minIndent int) int {
	last := start
	for i := start + 1; i < len(f.lines); i++ {
		t := f.text(i)
		s := strings.TrimLeft(t, " ")
		switch indent := len(t) - len(s); {
		case s == "":
		case indent >= minIndent:
			last = i
		case s[0] == '#':
		default:
			return last
		}
	}
	return last
}

// entryStart returns the line (0-based) of the "-" that opens the list
// entry whose content starts at node n.
func (f *questionFile) entryStart(n *yaml.Node) int {
	for i := n.Line - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimLeft(f.text(i), " "), "-") {
			return i
		}
	}
	return n.Line - 1
}

// questions parses the file and returns its questions' mappings by id.
func (f *questionFile) questions() (map[string]*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(f.bytes(), &doc); err != nil {
		return nil, err
	}
	out := map[string]*yaml.Node{}
	if len(doc.Content) == 0 {
		return out, nil
	}
	qs := mapValue(doc.Content[0], "questions")
	if qs == nil || qs.Kind != yaml.SequenceNode {
		return out, nil
	}
	for _, n := range qs.Content {
		if id := mapValue(n, "id"); id != nil && n.Kind == yaml.MappingNode {
			out[strings.TrimSpace(id.Value)] = n
		}
	}
	return out, nil
}

// mapValue returns the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func mapKey(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

// block is one entry of a question's verification or calibration list, as
// verify writes it: the field naming who made the entry first, then the
// rest, one "key: value" line each.
type block struct {
	list   string   // the question's key: "verification" or "calibration"
	by     string   // the field that names who made the entry: "solver" or "rater"
	who    string   // its value
	fields []string // the entry's other lines, rendered
}

// lists are the question keys verify edits, in the order it writes them in
// a question: a new list goes after the lists before it and before the
// lists after it.
var lists = []string{"verification", "calibration"}

func verificationBlock(v certbank.Verification) block {
	b := block{list: "verification", by: "solver", who: v.Solver, fields: []string{
		"answer: " + string(v.Answer),
		"date: " + v.Date,
	}}
	if v.Override != "" {
		b.fields = append(b.fields, "override: "+strconv.Quote(v.Override))
	}
	return b
}

func calibrationBlock(c certbank.Calibration) block {
	return block{list: "calibration", by: "rater", who: c.Rater, fields: []string{
		"difficulty: " + string(c.Difficulty),
		"level: " + string(c.Level),
		"date: " + c.Date,
	}}
}

// upsert sets e.who's entry in the e.list list of question id: it replaces
// their existing entry (and drops later duplicates of it), appends a new
// entry to an existing list, or adds the list to the question (after the
// lists that come before it in lists, before those after it, else at the
// end of the question). Nothing else in the file changes.
func (f *questionFile) upsert(id string, e block) error {
	qs, err := f.questions()
	if err != nil {
		return fmt.Errorf("cannot parse the file before editing it: %w", err)
	}
	q, ok := qs[id]
	if !ok {
		return fmt.Errorf("question %s is not in the file", id)
	}
	if q.Style&yaml.FlowStyle != 0 {
		return fmt.Errorf("question %s is written as a flow mapping ({...}); write it as a block mapping so verify can edit it", id)
	}
	keyCol := q.Column - 1
	vals := mapValue(q, e.list)
	switch {
	case vals == nil:
		at := f.newListAt(q, e.list)
		f.splice(at, at, append([]string{indent(keyCol) + e.list + ":"}, renderEntry(keyCol+2, e)...))
		return nil
	case vals.Kind == yaml.ScalarNode && vals.Tag == "!!null",
		vals.Kind == yaml.SequenceNode && len(vals.Content) == 0:
		key := mapKey(q, e.list)
		if vals.Line != key.Line && vals.Tag != "!!null" {
			return fmt.Errorf("question %s: write its empty %s list on one line so verify can edit it", id, e.list)
		}
		f.splice(key.Line-1, key.Line, append([]string{indent(keyCol) + e.list + ":"}, renderEntry(keyCol+2, e)...))
		return nil
	case vals.Kind != yaml.SequenceNode || vals.Style&yaml.FlowStyle != 0:
		return fmt.Errorf("question %s: %q must be a block list (lines starting with \"- \") so verify can edit it", id, e.list)
	}

	var mine []span
	for _, n := range vals.Content {
		if n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle != 0 {
			return fmt.Errorf("question %s: every %s entry must be a block mapping so verify can edit it", id, e.list)
		}
		if s := mapValue(n, e.by); s != nil && strings.TrimSpace(s.Value) == e.who {
			mine = append(mine, f.spanOf(n))
		}
	}
	if len(mine) == 0 {
		last := f.spanOf(vals.Content[len(vals.Content)-1])
		f.splice(last.to, last.to, renderEntry(last.dash, e))
		return nil
	}
	for i := len(mine) - 1; i > 0; i-- {
		f.splice(mine[i].from, mine[i].to, nil)
	}
	f.splice(mine[0].from, mine[0].to, renderEntry(mine[0].dash, e))
	return nil
}

// span is where a list entry is written: lines [from, to), its "-" at
// column dash.
type span struct{ from, to, dash int }

func (f *questionFile) spanOf(n *yaml.Node) span {
	from := f.entryStart(n)
	dash := len(f.text(from)) - len(strings.TrimLeft(f.text(from), " "))
	return span{from, f.lastLine(from, n.Column-1) + 1, dash}
}

// newListAt returns the line (0-based) where a new list named list goes in
// question q: right after the last list that comes before it in lists,
// else right before the first list after it, else at the end of q.
func (f *questionFile) newListAt(q *yaml.Node, list string) int {
	i := slices.Index(lists, list)
	for _, before := range slices.Backward(lists[:i]) {
		if vals := mapValue(q, before); vals != nil {
			if vals.Kind == yaml.SequenceNode && len(vals.Content) > 0 && vals.Style&yaml.FlowStyle == 0 {
				return f.spanOf(vals.Content[len(vals.Content)-1]).to
			}
			return f.lastLine(vals.Line-1, q.Column) + 1
		}
	}
	for _, after := range lists[i+1:] {
		if key := mapKey(q, after); key != nil {
			return key.Line - 1
		}
	}
	return f.lastLine(q.Line-1, q.Column-1) + 1
}

// renderEntry renders e as list lines whose "-" is at column dash.
func renderEntry(dash int, e block) []string {
	lines := []string{indent(dash) + "- " + e.by + ": " + scalar(e.who)}
	for _, l := range e.fields {
		lines = append(lines, indent(dash+2)+l)
	}
	return lines
}

func indent(n int) string { return strings.Repeat(" ", n) }

// plainRE matches text that is safe as an unquoted YAML scalar; scalar
// still quotes it when YAML would read it as something other than text.
var plainRE = regexp.MustCompile(`^[\p{L}\p{N}_][\p{L}\p{N}_ .,/+()@'-]*$`)

// scalar renders s as a one-line YAML scalar: plain when that reads back as
// the same text, else double-quoted.
func scalar(s string) string {
	if plainRE.MatchString(s) && !strings.HasSuffix(s, " ") {
		var back any
		if err := yaml.Unmarshal([]byte(s), &back); err == nil && back == s {
			return s
		}
	}
	return strconv.Quote(s)
}

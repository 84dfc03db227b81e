package verify

import (
	"fmt"
	"regexp"
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

// upsert sets solver v.Solver's verification entry on question id: it
// replaces the solver's existing entry (and drops later duplicates of it),
// appends a new entry to an existing verification list, or adds a
// verification list at the end of the question. Nothing else in the file
// changes.
func (f *questionFile) upsert(id string, v certbank.Verification) error {
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
	vals := mapValue(q, "verification")
	switch {
	case vals == nil:
		at := f.lastLine(q.Line-1, keyCol) + 1
		f.splice(at, at, append([]string{indent(keyCol) + "verification:"}, renderEntry(keyCol+2, v)...))
		return nil
	case vals.Kind == yaml.ScalarNode && vals.Tag == "!!null",
		vals.Kind == yaml.SequenceNode && len(vals.Content) == 0:
		key := mapKey(q, "verification")
		if vals.Line != key.Line && vals.Tag != "!!null" {
			return fmt.Errorf("question %s: write its empty verification list on one line so verify can edit it", id)
		}
		f.splice(key.Line-1, key.Line, append([]string{indent(keyCol) + "verification:"}, renderEntry(keyCol+2, v)...))
		return nil
	case vals.Kind != yaml.SequenceNode || vals.Style&yaml.FlowStyle != 0:
		return fmt.Errorf("question %s: \"verification\" must be a block list (lines starting with \"- \") so verify can edit it", id)
	}

	// Spans of the existing entries of this solver, and of the last entry.
	type span struct{ from, to, dash int }
	spanOf := func(e *yaml.Node) span {
		from := f.entryStart(e)
		dash := len(f.text(from)) - len(strings.TrimLeft(f.text(from), " "))
		return span{from, f.lastLine(from, e.Column-1) + 1, dash}
	}
	var mine []span
	for _, e := range vals.Content {
		if e.Kind != yaml.MappingNode || e.Style&yaml.FlowStyle != 0 {
			return fmt.Errorf("question %s: every verification entry must be a block mapping so verify can edit it", id)
		}
		if s := mapValue(e, "solver"); s != nil && strings.TrimSpace(s.Value) == v.Solver {
			mine = append(mine, spanOf(e))
		}
	}
	if len(mine) == 0 {
		last := spanOf(vals.Content[len(vals.Content)-1])
		f.splice(last.to, last.to, renderEntry(last.dash, v))
		return nil
	}
	for i := len(mine) - 1; i > 0; i-- {
		f.splice(mine[i].from, mine[i].to, nil)
	}
	f.splice(mine[0].from, mine[0].to, renderEntry(mine[0].dash, v))
	return nil
}

// renderEntry renders a verification entry as list lines whose "-" is at
// column dash.
func renderEntry(dash int, v certbank.Verification) []string {
	in := indent(dash + 2)
	lines := []string{
		indent(dash) + "- solver: " + scalar(v.Solver),
		in + "answer: " + string(v.Answer),
		in + "date: " + v.Date,
	}
	if v.Override != "" {
		lines = append(lines, in+"override: "+strconv.Quote(v.Override))
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

package verify

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/certbank/certbank"
	"github.com/certbank/certbank/generator"
	"gopkg.in/yaml.v3"
)

// Measured is a difficulty measured from learners' answers to record on
// question ID: its label becomes M.Difficulty and a "measured:" block holds
// M.
type Measured struct {
	ID string
	M  certbank.Measurement
}

// Measure records measured difficulties in the question files, in place:
// each question's difficulty label is set to the measured one and its
// measured block is written (replacing an earlier one). As with Import,
// the edited files must load and nothing else in them may change, or no
// file is written. It returns the files written.
func (b *Bank) Measure(ms []Measured) ([]string, error) {
	before, err := b.load(nil)
	if err != nil {
		return nil, err
	}
	b.setContent(before)
	want := map[string]certbank.Measurement{}
	byFile := map[string][]Measured{}
	var files []string
	var probs generator.Problems
	for _, m := range ms {
		if m.M.Difficulty.Rank() < 0 || m.M.Responses < 1 || m.M.P < 0 || m.M.P > 1 || checkDate(m.M.Date) != nil {
			return nil, certbank.Errorf(certbank.Invalid, "measurement of %s is invalid: %+v", m.ID, m.M)
		}
		_, src, ok := b.question(m.ID)
		if !ok {
			return nil, certbank.Errorf(certbank.Invalid, "no question %s in the content", m.ID)
		}
		want[m.ID] = m.M
		rel := b.rel(src.File)
		if _, ok := byFile[rel]; !ok {
			files = append(files, rel)
		}
		byFile[rel] = append(byFile[rel], m)
	}
	orig, edited := map[string][]byte{}, map[string][]byte{}
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(b.dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		f := parseQuestionFile(data)
		for _, m := range byFile[rel] {
			if err := f.measure(m); err != nil {
				probs = append(probs, generator.Problem{File: path.Join(b.dir, rel), Msg: err.Error()})
			}
		}
		orig[rel], edited[rel] = data, f.bytes()
	}
	if len(probs) > 0 {
		return nil, probs
	}
	after, err := b.load(edited)
	if err != nil {
		return nil, fmt.Errorf("the edited files would not load (nothing was written; please report this):\n%w", err)
	}
	if len(before.Questions) != len(after.Questions) {
		return nil, fmt.Errorf("editing would change the number of questions; nothing was written (please report this)")
	}
	for i := range before.Questions {
		x, y := before.Questions[i], after.Questions[i]
		if m, ok := want[x.ID]; ok {
			if y.Measured == nil || *y.Measured != m || y.Difficulty != m.Difficulty {
				return nil, fmt.Errorf("editing %s:%d did not record the measurement of %s; nothing was written (please report this)", before.Sources[i].File, before.Sources[i].Line, x.ID)
			}
			x.Measured, y.Measured, x.Difficulty, y.Difficulty = nil, nil, "", ""
		}
		if !reflect.DeepEqual(x, y) {
			return nil, fmt.Errorf("editing %s:%d would change question %s beyond its label and measurement; nothing was written (please report this)", before.Sources[i].File, before.Sources[i].Line, x.ID)
		}
	}
	if err := b.write(orig, edited); err != nil {
		return nil, err
	}
	b.setContent(after)
	var out []string
	for _, rel := range files {
		out = append(out, path.Join(b.dir, rel))
	}
	return out, nil
}

// measure sets question m.ID's difficulty line and writes its measured
// block (replacing an existing one, else at the end of the question).
func (f *questionFile) measure(m Measured) error {
	qs, err := f.questions()
	if err != nil {
		return fmt.Errorf("cannot parse the file before editing it: %w", err)
	}
	q, ok := qs[m.ID]
	if !ok {
		return fmt.Errorf("question %s is not in the file", m.ID)
	}
	if q.Style&yaml.FlowStyle != 0 {
		return fmt.Errorf("question %s is written as a flow mapping ({...}); write it as a block mapping so it can be edited", m.ID)
	}
	keyCol := q.Column - 1
	d := mapValue(q, "difficulty")
	if d == nil || d.Kind != yaml.ScalarNode || d.Line != mapKey(q, "difficulty").Line {
		return fmt.Errorf("question %s: write its difficulty on one line so it can be edited", m.ID)
	}
	line := f.text(d.Line - 1)
	f.splice(d.Line-1, d.Line, []string{line[:d.Column-1] + string(m.M.Difficulty)})
	block := []string{
		indent(keyCol) + "measured:",
		indent(keyCol+2) + "responses: " + strconv.Itoa(m.M.Responses),
		indent(keyCol+2) + "p: " + strconv.FormatFloat(m.M.P, 'f', -1, 64),
		indent(keyCol+2) + "difficulty: " + string(m.M.Difficulty),
		indent(keyCol+2) + "date: " + m.M.Date,
	}
	// Parse again: the line numbers are those of the edited text.
	qs, _ = f.questions()
	q = qs[m.ID]
	if k := mapKey(q, "measured"); k != nil {
		from := k.Line - 1
		to := f.lastLine(from, keyCol+1) + 1
		if strings.TrimSpace(strings.TrimPrefix(f.text(from), indent(keyCol)+"measured:")) != "" {
			return fmt.Errorf("question %s: write its measured block as a block mapping so it can be edited", m.ID)
		}
		f.splice(from, to, block)
		return nil
	}
	at := f.lastLine(q.Line-1, keyCol) + 1
	f.splice(at, at, block)
	return nil
}

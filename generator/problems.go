package generator

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong in the content tree, at a file and line.
type Problem struct {
	File string // path relative to the content directory's parent, slash-separated
	Line int
	Msg  string // what is wrong and how to fix it
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// Problems is every problem found in one run. As an error it prints one
// problem per line, sorted by file and line.
type Problems []Problem

func (ps Problems) Error() string {
	ps.Sort()
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Sort orders the problems by file, line and message.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].File != ps[j].File {
			return ps[i].File < ps[j].File
		}
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Msg < ps[j].Msg
	})
}

func (ps *Problems) add(file string, line int, format string, args ...any) {
	*ps = append(*ps, Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

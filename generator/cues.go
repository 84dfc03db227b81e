package generator

import (
	"fmt"
	"strings"

	"github.com/certbank/certbank"
)

// Cue rules: testwise cues that let a candidate pick the key without knowing
// the subject (docs/authoring.md, "Cues").

// clangWord returns a content word of the stem that the key repeats and no
// distractor does (a "clang association"), or "". Words that most stems of
// the certification use (common, reporting more than maxClangShare of
// them) are the field's vocabulary, not a cue.
func clangWord(q *certbank.Question, common func(string) bool) string {
	k := q.Answer.Index()
	if k < 0 {
		return ""
	}
	stem := map[string]bool{}
	for _, w := range words(q.Stem) {
		if cw, ok := contentWord(w); ok {
			stem[cw] = true
		}
	}
	others := map[string]bool{}
	for i, o := range q.Options {
		if i == k {
			continue
		}
		for _, w := range words(o) {
			if cw, ok := contentWord(w); ok {
				others[cw] = true
			}
		}
	}
	for _, w := range strings.FieldsFunc(q.Options[k], notWordRune) {
		if cw, ok := contentWord(w); ok && stem[cw] && !others[cw] && !common(cw) {
			return w
		}
	}
	return ""
}

// contentWord returns the folded form of w (lower case, a plural or verb
// ending taken off) and whether it carries meaning: at least four letters,
// not a function word and not a word that every stem of the field uses.
func contentWord(w string) (string, bool) {
	w = strings.ToLower(w)
	if len(w) < 4 || stopWords[w] || strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
		return "", false
	}
	for _, suf := range []string{"ies", "ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 4 && !strings.HasSuffix(w, "ss") {
			w = strings.TrimSuffix(w, suf)
			if suf == "ies" {
				w += "y"
			}
			break
		}
	}
	return w, !stopWords[w]
}

// stopWords are words too common in stems and options to be a cue.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`about above after again against also although among another because been
		before being below between both cannot could does doing down during each either else even every
		few from further given have having here how into itself just least less many might more most much
		must need needs only other others over same should since some still such than that their them
		then there these they this those through under until upon very want wants what when where whether
		which while will with within without would your yours first best next most after must what
		make makes made take takes used uses using like likely also well would team company organization
		organisation business option options answer question following scenario currently already
		able new existing require requires required ensure ensures allow allows all any one two three
		four five per way ways part case kind type types thing things someone something`) {
		m[w] = true
	}
	return m
}()

// Option forms, by an option's first word.
const (
	formOther      = "other"
	formImperative = "an instruction (a verb first)"
	formGerund     = "an -ing phrase"
	formNoun       = "a noun phrase with an article"
	formTo         = "a to-phrase"
)

// optionForm classifies the grammatical form of an option by its first word.
func optionForm(o string) string {
	f := strings.Fields(o)
	if len(f) == 0 {
		return formOther
	}
	w := strings.ToLower(strings.Trim(f[0], `"'(),;:.`))
	switch {
	case w == "a" || w == "an" || w == "the":
		return formNoun
	case w == "to" && len(f) > 1:
		return formTo
	case imperativeVerbs[w]:
		return formImperative
	case len(w) > 5 && strings.HasSuffix(w, "ing") && !notGerunds[w]:
		return formGerund
	}
	return formOther
}

// oddForm returns the letter of the one option whose form differs from the
// other three, which share a recognised form, and the two forms; ok is false
// when the options agree or no single option stands out.
func oddForm(q *certbank.Question) (odd certbank.Letter, majority, its string, ok bool) {
	var forms [4]string
	count := map[string]int{}
	for i, o := range q.Options {
		forms[i] = optionForm(o)
		count[forms[i]]++
	}
	for form, n := range count {
		if n != 3 || form == formOther {
			continue
		}
		for i, f := range forms {
			if f != form {
				// Verbs are an open class: a first word we do not
				// recognise is not evidence of another form.
				if f == formOther {
					return "", "", "", false
				}
				return certbank.Letters[i], form, f, true
			}
		}
	}
	return "", "", "", false
}

// imperativeVerbs are verbs that open options written as instructions.
var imperativeVerbs = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`accept acknowledge activate add adjust adopt aggregate alert align allocate allow analyze
		analyse apply approve archive ask assess assign attach audit authenticate authorize automate avoid back
		balance ban block boot break bring build bundle buy calculate call cancel capture change check choose
		classify clean clear clone close collect combine commit communicate compare compile complete compress
		conduct configure confirm connect consolidate contact contain continue convert copy correct create
		decommission decrease decrypt define defer delay delegate delete deny deploy deprecate describe design
		destroy detach detect determine develop disable disconnect discuss dismiss display distribute document
		double downgrade drain drop duplicate edit educate elevate eliminate email embed empty enable encode encrypt
		enforce engage enroll enrol ensure enter erase escalate establish estimate evaluate examine exclude execute
		expand expire export expose extend extract fail fetch file filter find fix flag flush follow force
		format forward freeze gather generate give grant group halt hand harden hash hire hold host identify
		ignore implement import improve include increase inform initiate inject insert inspect install instruct
		integrate interview introduce investigate invoke isolate issue join keep kill label launch lease leave
		limit link list load lock log look lower maintain manage map mark mask measure merge migrate minimize
		mirror modify monitor mount move multiply negotiate normalize notify obtain offer open optimize order
		outsource overwrite partition patch pause perform permit pin place plan point poll post postpone power
		prepare present preserve prevent print prioritize proceed procure prohibit promote provide provision
		publish pull purchase purge push put quarantine query queue raise rank read rebuild reboot rebalance
		recommend reconcile record recover redeploy redirect reduce re-create recreate refactor refer refresh
		refuse register reimage reinstall reject release reload remediate remove rename renew reorder repair
		replace replicate report request require reroute rescan reserve reset resize resolve restart restore
		restrict resubmit retain retire retrain retry return reuse review revise revoke rewrite roll rotate route
		run sanitize save scale scan schedule scope search secure segment select sell send separate serve set
		share shift shorten show shut sign simplify size skip snapshot sort specify split spread stage start
		stop store strip submit subscribe substitute suspend swap switch sync synchronize tag take talk
		terminate test throttle tighten train transfer transition translate trigger trim truncate tune turn
		unlock unmount unplug update upgrade upload use validate verify wait warn watch whitelist wipe
		withdraw work write zero degauss embed fine-tune finetune deliver make ship lengthen pre-train pretrain
		prompt ground chunk cache shard replicate federate invite onboard offboard pair bind broadcast capture
		characterize charge check clarify coach collaborate commission compensate compose conceal concentrate
		consult coordinate craft crash cross decide declare decline deduplicate demonstrate demote depreciate
		derive detail diagnose dictate digitize direct disband disclose discover dispose divide draft drive
		emphasize employ encapsulate end endorse enlarge enrich equip exercise exploit facilitate fork formalize
		gate govern grade guarantee guide handle harmonize help hide highlight hook impose incentivize index
		interrupt invest involve iterate lead learn leverage lift localize maximize meet mention mitigate mock
		mute narrow nominate observe obfuscate omit operate orchestrate organize override own package parse
		pass pay phase pick pilot ping plot poison prefer preload prepend price probe produce program project
		prototype prove prune qualify quantify rate re-run rerun reassign rebase recalculate receive reclassify
		reconfigure redesign redo reduce reengineer re-enable reenable reference reformat regenerate reinforce
		rely remind renegotiate repeat rephrase replan reply represent reprioritize reprovision research resample
		rescope resend resume retest retrieve reverse revert rewind rollback scrub seal seed seek sequence
		shadow shrink sideload silence simulate slice solicit source spin sponsor stack standardize steer
		stream stretch structure study suggest summarize supply support surface survey tailor target teach
		tell tether thank tie time toggle track trade transcribe transform travel treat trust uninstall unify
		unpublish unshare unsubscribe uplift vary vet virtualize visualize weigh widen wrap`) {
		m[w] = true
	}
	return m
}()

// notGerunds are words ending in -ing that are not verb forms.
var notGerunds = map[string]bool{"string": true, "strings": true, "during": true, "nothing": true, "something": true,
	"anything": true, "everything": true, "spring": true, "ceiling": true, "morning": true, "evening": true,
	"offering": true, "building": true, "setting": true, "settings": true, "thing": true, "ring": true,
	"pricing": true, "routing": true, "hashing": true, "logging": true, "clustering": true, "tagging": true,
	"sharding": true, "caching": true, "tokenizing": true, "padding": true, "funding": true, "meeting": true,
	"training": true, "testing": true, "scaling": true, "monitoring": true, "networking": true, "licensing": true,
	"baselining": true, "sandboxing": true, "hardening": true, "versioning": true, "mirroring": true}

// maxClangShare is the share of a certification's stems above which a word
// is its common vocabulary rather than a cue.
const maxClangShare = 0.10

// maxClangStems caps that share: a word that more than this many stems use
// is the certification's vocabulary whatever its size. Without the cap a
// growing certification lowers every word's share, and keys written long ago
// become cues without changing.
const maxClangStems = 20

// stemWordCounts counts, per content word, the questions of idx whose stem
// uses it.
func stemWordCounts(c *Content, idx []int) map[string]int {
	df := map[string]int{}
	for _, i := range idx {
		seen := map[string]bool{}
		for _, w := range words(c.Questions[i].Stem) {
			if cw, ok := contentWord(w); ok && !seen[cw] {
				seen[cw] = true
				df[cw]++
			}
		}
	}
	return df
}

// lintClang adds a finding for each question of idx whose key echoes a word
// of its stem that no distractor uses.
func lintClang(c *Content, idx []int, add func(rule string, s Source, format string, args ...any)) {
	df := stemWordCounts(c, idx)
	limit := max(2, min(maxClangStems, int(maxClangShare*float64(len(idx)))))
	common := func(w string) bool { return df[w] > limit }
	for _, i := range idx {
		if w := clangWord(&c.Questions[i], common); w != "" {
			add("clang", c.Sources[i], "the stem's word %q appears in the key and in no distractor, which points to the answer; reword the key or use the word in a distractor too", w)
		}
	}
}

// lintCues adds the per-question cue findings of q.
func lintCues(q *certbank.Question, add func(rule, format string, args ...any)) {
	if l, form, its, ok := oddForm(q); ok {
		add("option-form", "option %s is %s while the other three are %s; write all four options in the same grammatical form", l, its, form)
	}
}

// lintCalibration adds a finding for each calibration rating that
// contradicts q's label, and for recall questions labelled above easy; for
// a question with a measured difficulty, only when the label differs from it.
func lintCalibration(q *certbank.Question, add func(rule, format string, args ...any)) {
	if m := q.Measured; m != nil {
		// Learners' answers outrank a rater's judgement: only the
		// measured label counts.
		if m.Difficulty != q.Difficulty {
			add("calibration", "labelled %s but measured %s from %d learners' answers (p %.2f); relabel it %s or run certbank items apply", q.Difficulty, m.Difficulty, m.Responses, m.P, m.Difficulty)
		}
		return
	}
	for _, c := range q.Calibrations {
		switch {
		case c.Difficulty.Rank() >= 0 && c.Miscalibrated(q.Difficulty):
			add("calibration", "labelled %s but rated %s by %q; relabel the question or rewrite it to the label's level", q.Difficulty, c.Difficulty, c.Rater)
		case c.Level == certbank.Recall && q.Difficulty != certbank.Easy:
			add("calibration", "rated a recall question by %q but labelled %s; recall questions are easy at most: relabel or rewrite as a scenario", c.Rater, q.Difficulty)
		}
	}
}

// lintCurrency reports a certification whose targeted exam retired on or
// before the date the exam statuses were last assessed.
func lintCurrency(site *certbank.Site, cert *certbank.Certification) string {
	if cert.Status != certbank.Retiring || cert.RetirementDate == "" || site.ExamCurrencyVerified == "" {
		return ""
	}
	if cert.RetirementDate <= site.ExamCurrencyVerified {
		return fmt.Sprintf("%s retired on %s (on or before exam_currency_verified %s); target the successor %s: its blueprint, objectives and questions, keeping the slug (docs/exam-currency.md)",
			orDefault(cert.ExamCode, cert.Slug), cert.RetirementDate, site.ExamCurrencyVerified, orDefault(cert.Successor, "exam"))
	}
	return ""
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// nearDuplicateTests finds questions of one certification whose tests lines
// name the same fact: equal once case and punctuation are ignored, or
// sharing most of their content words.
func nearDuplicateTests(c *Content, idx []int, add func(rule string, s Source, format string, args ...any)) {
	type line struct {
		i     int
		norm  string
		words map[string]bool
	}
	lines := make([]line, 0, len(idx))
	index := map[string][]int{} // content word → positions in lines
	byNorm := map[string]int{}
	for _, i := range idx {
		t := c.Questions[i].Tests
		if t == "" {
			continue
		}
		l := line{i: i, norm: strings.Join(words(t), " "), words: map[string]bool{}}
		for _, w := range words(t) {
			if cw, ok := contentWord(w); ok {
				l.words[cw] = true
			}
		}
		if j, dup := byNorm[l.norm]; dup {
			first := lines[j]
			add("duplicate-tests", c.Sources[i], "question %s tests the same thing as %s (%s:%d): %q; test another fact or remove one",
				c.Questions[i].ID, c.Questions[first.i].ID, c.Sources[first.i].File, c.Sources[first.i].Line, c.Questions[i].Tests)
			continue
		}
		byNorm[l.norm] = len(lines)
		pos := len(lines)
		counts := map[int]int{}
		for w := range l.words {
			for _, j := range index[w] {
				counts[j]++
			}
			index[w] = append(index[w], pos)
		}
		for j, shared := range counts {
			o := lines[j]
			if len(l.words) < 3 || len(o.words) < 3 {
				continue
			}
			if union := len(l.words) + len(o.words) - shared; float64(shared)/float64(union) >= nearDuplicateTestsThreshold {
				add("duplicate-tests", c.Sources[i], "question %s's tests line nearly repeats %s's (%s:%d): %q ~ %q; test another fact or remove one",
					c.Questions[i].ID, c.Questions[o.i].ID, c.Sources[o.i].File, c.Sources[o.i].Line, c.Questions[i].Tests, c.Questions[o.i].Tests)
				break
			}
		}
		lines = append(lines, l)
	}
}

// nearDuplicateTestsThreshold is the share of content words two tests lines
// may have in common before they are taken to name the same fact.
const nearDuplicateTestsThreshold = 0.8

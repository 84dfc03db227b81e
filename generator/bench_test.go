package generator_test

// Benchmarks of the static build on the synthetic 26 × 500 = 13,000-question
// bank of generator/synth (the corpus of research/perf-baselines.md §3).
// They run only with -bench; the bank is written once per process.
//
//	go test ./generator -run '^$' -bench . -benchtime 5x -count 5
//
// BenchmarkDecodeOnly is the floor: read every YAML file and decode it with
// yaml.v3 into plain structs, with as many workers as Load. The targets
// (BENCHMARKS.md, "Static build") are BuildFull ≤ 1.3 × DecodeOnly of the
// same run and a peak RSS under 300 MB.

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/certbank/certbank/generator"
	"github.com/certbank/certbank/generator/synth"
	"gopkg.in/yaml.v3"
)

const (
	synthCerts   = 26
	synthPerCert = 500
	synthSeed    = 20261121
)

var synthBank struct {
	once sync.Once
	dir  string
	err  error
}

// synthContent returns the content directory of the synthetic 13k bank,
// writing it on first use. TestMain removes it.
func synthContent(tb testing.TB) string {
	tb.Helper()
	synthBank.once.Do(func() {
		synthBank.dir, synthBank.err = os.MkdirTemp("", "certbank-synth-")
		if synthBank.err == nil {
			synthBank.err = synth.Write(filepath.Join(synthBank.dir, "content"), synthCerts, synthPerCert, synthSeed)
		}
	})
	if synthBank.err != nil {
		tb.Fatal(synthBank.err)
	}
	return filepath.Join(synthBank.dir, "content")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if synthBank.dir != "" {
		os.RemoveAll(synthBank.dir)
	}
	os.Exit(code)
}

// plainQuestion is a question file decoded without any validation.
type plainQuestion struct {
	ID           string            `yaml:"id"`
	Domain       string            `yaml:"domain"`
	Difficulty   string            `yaml:"difficulty"`
	Question     string            `yaml:"question"`
	Options      map[string]string `yaml:"options"`
	Answer       string            `yaml:"answer"`
	Explanation  string            `yaml:"explanation"`
	References   []string          `yaml:"references"`
	Verification []struct {
		Solver   string `yaml:"solver"`
		Answer   string `yaml:"answer"`
		Date     string `yaml:"date"`
		Override string `yaml:"override"`
	} `yaml:"verification"`
}

// decodeOnly reads and decodes every YAML file under dir with
// runtime.GOMAXPROCS(0) workers, like Load, and returns the question count.
func decodeOnly(dir string) (int, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	counts := make([]int, len(files))
	errs := make([]error, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				data, err := os.ReadFile(files[i])
				if err != nil {
					errs[i] = err
					continue
				}
				if base := filepath.Base(files[i]); base == "site.yaml" || base == "certification.yaml" {
					var v map[string]any
					errs[i] = yaml.Unmarshal(data, &v)
					continue
				}
				var qf struct {
					Questions []plainQuestion `yaml:"questions"`
				}
				errs[i] = yaml.Unmarshal(data, &qf)
				counts[i] = len(qf.Questions)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	n := 0
	for i := range files {
		if errs[i] != nil {
			return 0, fmt.Errorf("%s: %w", files[i], errs[i])
		}
		n += counts[i]
	}
	return n, nil
}

func BenchmarkDecodeOnly(b *testing.B) {
	dir := synthContent(b)
	for b.Loop() {
		n, err := decodeOnly(dir)
		if err != nil {
			b.Fatal(err)
		}
		if n != synthCerts*synthPerCert {
			b.Fatalf("decoded %d questions, want %d", n, synthCerts*synthPerCert)
		}
	}
}

// fullBuild is what `certbank build` does: Load, Build and Output.Write.
func fullBuild(content, out string) (*generator.Output, error) {
	c, err := generator.Load(os.DirFS(content), "content")
	if err != nil {
		return nil, err
	}
	// The shipped site.yaml names no payee (the operator passes --pay-to);
	// the benchmarks build with the test fixtures' payee, whose key is not public.
	if c.Site.Payment.PayTo == "" {
		c.Site.Payment.PayTo = "0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c"
	}
	o, err := generator.Build(c, generator.Options{Date: "2026-11-21"})
	if err != nil {
		return nil, err
	}
	return o, o.Write(filepath.Join(out, "public"), filepath.Join(out, "bank.json"))
}

func BenchmarkBuildFull(b *testing.B) {
	dir := synthContent(b)
	out := b.TempDir()
	for b.Loop() {
		o, err := fullBuild(dir, out)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(o.Bank.Questions); n != synthCerts*synthPerCert {
			b.Fatalf("published %d questions, want %d", n, synthCerts*synthPerCert)
		}
	}
}

// BenchmarkBuildVsDecode alternates one decode-only pass and one full build
// per iteration, so both see the same machine load, and reports their
// medians and the ratios full/decode of wall time and of CPU time
// (user+system of this process, which a busy neighbour disturbs less).
func BenchmarkBuildVsDecode(b *testing.B) {
	dir := synthContent(b)
	out := b.TempDir()
	var decWall, fullWall, decCPU, fullCPU []float64
	cpu := func() float64 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	}
	measure := func(f func() error, wall, cpus *[]float64) {
		runtime.GC()
		t0, c0 := time.Now(), cpu()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		*wall = append(*wall, float64(time.Since(t0).Microseconds())/1e3)
		*cpus = append(*cpus, cpu()-c0)
	}
	for b.Loop() {
		measure(func() error { _, err := decodeOnly(dir); return err }, &decWall, &decCPU)
		measure(func() error { _, err := fullBuild(dir, out); return err }, &fullWall, &fullCPU)
	}
	b.ReportMetric(median(decWall), "decode-ms")
	b.ReportMetric(median(fullWall), "full-ms")
	b.ReportMetric(median(fullWall)/median(decWall), "full/decode")
	b.ReportMetric(median(decCPU), "decode-cpu-ms")
	b.ReportMetric(median(fullCPU), "full-cpu-ms")
	b.ReportMetric(median(fullCPU)/median(decCPU), "full/decode-cpu")
}

// The three steps of BuildFull on their own, to see where time goes.

func BenchmarkStepLoad(b *testing.B) {
	dir := synthContent(b)
	for b.Loop() {
		if _, err := generator.Load(os.DirFS(dir), "content"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStepBuild(b *testing.B) {
	c, err := generator.Load(os.DirFS(synthContent(b)), "content")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := generator.Build(c, generator.Options{Date: "2026-11-21"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStepWrite(b *testing.B) {
	c, err := generator.Load(os.DirFS(synthContent(b)), "content")
	if err != nil {
		b.Fatal(err)
	}
	o, err := generator.Build(c, generator.Options{Date: "2026-11-21"})
	if err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	for b.Loop() {
		if err := o.Write(filepath.Join(out, "public"), filepath.Join(out, "bank.json")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShippedContent builds the real content/ tree (target < 0.5 s).
func BenchmarkShippedContent(b *testing.B) {
	out := b.TempDir()
	for b.Loop() {
		if _, err := fullBuild("../content", out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPeakMemory runs one full build of the synthetic bank in a fresh
// process (this test binary, running TestBuildProcess) and reports that
// process's peak resident set size (VmHWM) and the Go runtime's Sys.
func BenchmarkPeakMemory(b *testing.B) {
	dir := synthContent(b)
	var peak, sys float64
	for b.Loop() {
		rss, s, err := buildInChild(dir, b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		peak, sys = max(peak, rss), max(sys, s)
	}
	b.ReportMetric(peak, "peak-RSS-MB")
	b.ReportMetric(sys, "go-Sys-MB")
}

const childEnv = "CERTBANK_BUILD_PROCESS"

// buildInChild runs a full build of content into out in a child process and
// returns its peak RSS and runtime Sys in MB.
func buildInChild(content, out string) (rssMB, sysMB float64, err error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBuildProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+content+string(os.PathListSeparator)+out)
	data, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("child build: %v\n%s", err, data)
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	found := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "peak-rss-kb" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			rssMB = kb / 1024
			found++
		}
		if len(f) == 2 && f[0] == "go-sys-bytes" {
			by, _ := strconv.ParseFloat(f[1], 64)
			sysMB = by / (1 << 20)
			found++
		}
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("child build printed no figures:\n%s", data)
	}
	return rssMB, sysMB, nil
}

// TestBuildProcess is the child of BenchmarkPeakMemory and
// TestPeakMemory; it does nothing unless CERTBANK_BUILD_PROCESS is set.
func TestBuildProcess(t *testing.T) {
	arg := os.Getenv(childEnv)
	if arg == "" {
		t.Skip("only runs as the child process of BenchmarkPeakMemory")
	}
	content, out, _ := strings.Cut(arg, string(os.PathListSeparator))
	if _, err := fullBuild(content, out); err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatalf("peak RSS needs /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Printf("peak-rss-kb %s\n", strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	fmt.Printf("go-sys-bytes %d\n", ms.Sys)
}

// TestPeakMemory checks the memory target (< 300 MB peak RSS for the 13k
// bank) when CERTBANK_PEAK_MEMORY_TEST=1; it takes a few seconds.
func TestPeakMemory(t *testing.T) {
	if os.Getenv("CERTBANK_PEAK_MEMORY_TEST") != "1" {
		t.Skip("set CERTBANK_PEAK_MEMORY_TEST=1 to build the 13,000-question bank in a child process and check its peak RSS")
	}
	rss, sys, err := buildInChild(synthContent(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak RSS %.0f MB, Go runtime Sys %.0f MB", rss, sys)
	if rss >= 300 {
		t.Errorf("peak RSS of a full 13k build is %.0f MB, want < 300 MB", rss)
	}
}

// BenchmarkLint is `certbank lint` on the 13,000-question synthetic bank:
// loading the tree, then every rule; it reports the rules' time relative to
// loading alone in the same run (lint/load).
func BenchmarkLint(b *testing.B) {
	dir := synthContent(b)
	var load, rules []float64
	for b.Loop() {
		t0 := time.Now()
		c, err := generator.Load(os.DirFS(dir), "content")
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		generator.Lint(c)
		load = append(load, t1.Sub(t0).Seconds())
		rules = append(rules, time.Since(t1).Seconds())
	}
	b.ReportMetric(median(load), "load-s")
	b.ReportMetric(median(rules), "rules-s")
	b.ReportMetric((median(load)+median(rules))/median(load), "lint/load")
}

// median returns the middle of xs (the upper one of an even count).
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

package generator

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hotkeygen/hotkeygen/annotations"
)

// DefaultOutput is the name of the file generated in each package.
const DefaultOutput = "hotkey_gen.go"

// Config says what to generate.
type Config struct {
	// Dir is the directory patterns are resolved in and positions are
	// reported relative to; empty means the current directory.
	Dir string
	// Patterns are go package patterns, as for go build; none means ".".
	Patterns []string
	// Output is the file name generated beside each package's sources;
	// empty means DefaultOutput.
	Output string
	// Env is the environment of the go command; nil means the process's.
	Env []string
}

// Result is what a run generated, held in memory so the caller can write
// it, or compare it with the disk, all at once.
type Result struct {
	// Dir is the absolute directory paths are reported relative to.
	Dir string
	// Files maps the absolute path of each package's output file to its
	// content.
	Files map[string][]byte
	// Remove lists generated files, by absolute path, of packages that no
	// longer have annotations.
	Remove []string
	// Notes say, for -v, what was generated and which parts of values are
	// copied shallowly.
	Notes []string
	// Warnings are problems that do not stop generation, such as a
	// misspelt directive, sorted by position; each message starts with
	// "warning: ". When generation fails they are among the errors.
	Warnings ErrorList
}

// Generate loads the packages cfg names and renders the file of every
// package that has annotations. On any problem it returns an ErrorList of
// all of them (or another error when loading failed) and no Result, so
// that nothing is written.
func Generate(cfg Config) (*Result, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	res := &Result{Dir: cfg.Dir, Files: map[string][]byte{}}
	inputs, err := load(cfg)
	if err != nil {
		return nil, res.relErrors(err)
	}
	targets, errs, warns := findAll(inputs)
	errs = append(errs, keyClashes(slices.Concat(targets...), res.Rel)...)
	errs = append(errs, sharedEntityKeys(slices.Concat(targets...), res.Rel)...)
	for i, in := range inputs {
		pkg, perrs := buildPackage(in, targets[i])
		errs = append(errs, perrs...)
		if pkg != nil {
			warns = append(warns, pkg.Warnings...)
		}
		switch {
		case pkg == nil && len(perrs) == 0 && in.OutputState == ourOutput:
			res.Remove = append(res.Remove, in.Output)
			res.Notes = append(res.Notes, fmt.Sprintf("%s: no //hotkey:cache annotations left; removing %s", in.Path, res.Rel(in.Output)))
		case pkg == nil:
		case in.OutputState == userOutput:
			errs.Add(tokenFile(in.Output), annotations.RuleOutputNotGenerated, fmt.Sprintf("not written by hotkeygen (it does not start with %q); rename it, or choose another file name with -output", Header))
		default:
			content, err := emit(pkg)
			if err != nil {
				errs.Add(tokenFile(in.Output), annotations.RuleInternalError, err.Error())
				continue
			}
			res.Files[in.Output] = content
			names := make([]string, len(pkg.Entities))
			for i, e := range pkg.Entities {
				names[i] = e.Repo()
			}
			res.Notes = append(res.Notes, fmt.Sprintf("%s: %s in %s", in.Path, joinAnd(names), res.Rel(in.Output)))
			res.Notes = append(res.Notes, pkg.Notes...)
		}
	}
	if len(errs) > 0 {
		return nil, res.relErrors(append(errs, warns...))
	}
	if len(warns) > 0 {
		res.Warnings = res.relErrors(warns).(ErrorList)
	}
	return res, nil
}

// findAll finds the annotated types of every package of the run, by
// package, before any is built: the Redis keys of all of them are checked
// together, since one run's packages usually share one Redis.
func findAll(inputs []*pkgInput) (targets [][]target, errs, warns ErrorList) {
	targets = make([][]target, len(inputs))
	for i, in := range inputs {
		warns = append(warns, misspelt(in)...)
		var ferrs ErrorList
		targets[i], ferrs = findTargets(in)
		errs = append(errs, ferrs...)
	}
	return targets, errs, warns
}

// normalize fills in the defaults and makes Dir absolute.
func (cfg Config) normalize() (Config, error) {
	if len(cfg.Patterns) == 0 {
		cfg.Patterns = []string{"."}
	}
	if cfg.Output == "" {
		cfg.Output = DefaultOutput
	}
	if filepath.Base(cfg.Output) != cfg.Output || !strings.HasSuffix(cfg.Output, ".go") || strings.HasSuffix(cfg.Output, "_test.go") {
		return cfg, fmt.Errorf("output %q must be a file name ending in .go, without a directory, and not a test file", cfg.Output)
	}
	dir, err := filepath.Abs(cmp.Or(cfg.Dir, "."))
	if err != nil {
		return cfg, err
	}
	cfg.Dir = dir
	return cfg, nil
}

// Rel returns path relative to r.Dir when it lies inside it, so messages
// read the same on every machine.
func (r *Result) Rel(path string) string {
	if rel, err := filepath.Rel(r.Dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// relErrors rewrites the positions of an ErrorList relative to r.Dir and
// sorts it.
func (r *Result) relErrors(err error) error {
	list, ok := err.(ErrorList)
	if !ok {
		return err
	}
	list = slices.Clone(list)
	for i, e := range list {
		ee := *e
		if ee.Pos.Filename != "" {
			ee.Pos.Filename = r.Rel(ee.Pos.Filename)
		}
		list[i] = &ee
	}
	list.Sort()
	return list
}

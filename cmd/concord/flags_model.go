package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

// settingFlags are the flags of the models' declared settings
// (analysis.AllFields, the families' settings.go) that concord fit, eval
// and next share: JSON name a_b is flag --a-b, and a declared alias (such
// as --flag for --flag-threshold) names the same flag. A flag not given
// leaves its setting out (the model's default).
type settingFlags struct {
	vals []*settingValue
}

// settingValue is one setting's flag: the text given and its value. A
// part of a setting whose value is a struct of settings (the text
// featuriser's min_df of text) has part set.
type settingValue struct {
	f    analysis.SpecField
	part *multirater.Field
	text string
	x    reflect.Value
	set  bool
}

func (v *settingValue) String() string {
	if v == nil {
		return ""
	}
	return v.text
}

// flag is the flag's name.
func (v *settingValue) flag() string {
	if v.part != nil {
		return analysis.PartFlag(*v.part)
	}
	return v.f.Flag()
}

func (v *settingValue) Set(s string) error {
	f := v.f
	if v.part != nil {
		f = analysis.SpecField{Field: *v.part}
	}
	x, err := f.Parse(s, "--"+v.flag())
	if err != nil {
		return errors.New(annotations.ErrorMessage(err))
	}
	v.text, v.x, v.set = s, x, true
	return nil
}

// IsBoolFlag makes a flag of a true/false setting take no value.
func (v *settingValue) IsBoolFlag() bool {
	if v.part != nil {
		return v.part.Type.Kind() == reflect.Bool
	}
	return v.f.Type.Kind() == reflect.Bool
}

// addSettingFlags adds to fs the flags of every setting of FitSpec
// (analysis.AllFields): those of its common part (model, engine, seed,
// kernel, the text featuriser's, ...) and of every model's settings, with
// their declared aliases.
func addSettingFlags(fs *flag.FlagSet) *settingFlags {
	sf := &settingFlags{}
	for _, f := range analysis.AllFields() {
		if parts := f.Parts(); parts != nil {
			for i := range parts {
				v := &settingValue{f: f, part: &parts[i]}
				sf.vals = append(sf.vals, v)
				fs.Var(v, v.flag(), parts[i].Doc)
			}
			continue
		}
		v := &settingValue{f: f}
		if f.Common() && f.Default != "" {
			// A common setting's default is the flag's (the seed's 1).
			if err := v.Set(f.Default); err != nil {
				panic(fmt.Sprintf("concord: setting %s: default %q: %v", f.Name, f.Default, err))
			}
			v.set = false
		}
		sf.vals = append(sf.vals, v)
		fs.Var(v, f.Flag(), flagUsage(f))
		for _, a := range f.FlagAliases {
			fs.Var(v, a, "the same as --"+f.Flag())
		}
	}
	return sf
}

// flagUsage is a setting's help: its doc, range and default.
func flagUsage(f analysis.SpecField) string {
	u := f.Doc
	if f.HasRange && f.Type.Kind() != reflect.Slice {
		u += "; " + f.Range()
	}
	if f.Enum != nil && !f.HasRange {
		u += "; " + strings.Join(f.Enum, ", ")
	}
	switch {
	case f.Default != "":
		u += " (default " + f.Default + ")"
	case f.Zero != "":
		u += " (default: " + f.Zero + ")"
	}
	return u
}

// given reports whether the setting's flag (name: its JSON name) was
// given.
func (sf *settingFlags) given(name string) bool {
	for _, v := range sf.vals {
		if v.f.Name == name {
			return v.set
		}
	}
	return false
}

// only reports whether some flag given is a setting of model alone.
func (sf *settingFlags) only(model string) bool {
	for _, v := range sf.vals {
		if v.set && len(v.f.Families) == 1 && v.f.Families[0] == model {
			return true
		}
	}
	return false
}

// apply sets the settings given in spec, each checked against its
// declaration (a number against its range, where 0 is a value: --burnin 0
// is none), and the common settings' declared defaults (the seed's) where
// not given; the errors name the flag.
func (sf *settingFlags) apply(spec *analysis.FitSpec) error {
	for _, v := range sf.vals {
		switch {
		case v.part != nil && v.set:
			v.f.Value(spec).FieldByIndex(v.part.Index).Set(v.x)
		case v.set || v.x.IsValid():
			if err := v.f.SetGiven(spec, v.x, "--"+v.f.Flag()); err != nil {
				return err
			}
		}
	}
	return nil
}

// check rejects the flags given that a fit of spec's model and engine
// does not read, with the model table's one message naming the model's
// settings (analysis.Model.CheckGiven).
func (sf *settingFlags) check(spec analysis.FitSpec) error {
	m, err := analysis.LookupModel(spec.Model)
	if err != nil {
		return err
	}
	return m.CheckGiven(spec, sf.given)
}

// settingsUsage makes the usage of fs (concord fit, eval, next) print the
// command's own flags, then the settings' flags grouped by model: only
// the model's when args name one (concord fit --model confusion --help).
func settingsUsage(fs *flag.FlagSet, args []string) {
	usage := fs.Usage
	model := ""
	name := analysis.SettingOf(func(s *analysis.FitSpec) any { return &s.Model }).Flag()
	for i, a := range args {
		a = strings.TrimPrefix(a, "-")
		switch {
		case a == "-"+name && i+1 < len(args):
			model = args[i+1]
		case strings.HasPrefix(a, "-"+name+"="):
			_, model, _ = strings.Cut(a, "=")
		}
	}
	fs.Usage = func() {
		// The command's synopsis and description, then its own flags (a
		// flag set without the settings), then the settings by model.
		out := fs.Output()
		var head bytes.Buffer
		fs.SetOutput(&head)
		usage()
		fs.SetOutput(out)
		h, _, _ := strings.Cut(head.String(), "Flags:\n")
		fmt.Fprint(out, h+"Flags:\n")
		own := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		own.SetOutput(out)
		fs.VisitAll(func(f *flag.Flag) {
			if _, ok := f.Value.(*settingValue); !ok {
				own.Var(f.Value, f.Name, f.Usage)
			}
		})
		own.PrintDefaults()
		printCommonHelp(out, fs)
		printSettingsHelp(out, fs, model)
	}

}

// printCommonHelp writes the flags of the settings of every model (FitSpec's
// common part) in their declared groups.
func printCommonHelp(w io.Writer, fs *flag.FlagSet) {
	var groups []string
	byGroup := map[string][]string{}
	for _, f := range analysis.AllFields() {
		if !f.Common() {
			continue
		}
		if _, ok := byGroup[f.Group]; !ok {
			groups = append(groups, f.Group)
		}
		var help []string
		if parts := f.Parts(); parts != nil {
			for _, p := range parts {
				help = append(help, fmt.Sprintf("  --%s\n    \t%s\n", analysis.PartFlag(p), p.Doc))
			}
		} else {
			name := "--" + f.Flag()
			for _, a := range f.FlagAliases {
				name += ", --" + a
			}
			help = append(help, fmt.Sprintf("  %s\n    \t%s\n", name, flagUsage(f)))
		}
		byGroup[f.Group] = append(byGroup[f.Group], help...)
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\nSettings of every model: %s:\n%s", g, strings.Join(byGroup[g], ""))
	}
}

// printSettingsHelp writes the settings' flags grouped by model: every
// model's, or model's alone when it is a model's name.
func printSettingsHelp(w io.Writer, fs *flag.FlagSet, model string) {
	for _, m := range analysis.Models() {
		if model != "" && !strings.EqualFold(model, m.Name) {
			continue
		}
		fmt.Fprintf(w, "\nSettings of the %s model (engines %s):\n", m.Name, strings.Join(m.Engines, ", "))
		for _, f := range analysis.Fields(m.Name, "") {
			if f.Common() {
				continue
			}
			fl := fs.Lookup(f.Flag())
			if fl == nil {
				continue
			}
			name := "--" + f.Flag()
			for _, a := range f.FlagAliases {
				name += ", --" + a
			}
			eng := ""
			if f.Engines != nil {
				eng = " [" + strings.Join(f.Engines, ", ") + "]"
			}
			fmt.Fprintf(w, "  %s%s\n    \t%s\n", name, eng, flagUsage(f))
		}
	}
}

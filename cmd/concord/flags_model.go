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
)

// settingFlags are the flags of the models' declared settings
// (analysis.AllFields, the families' settings.go) that concord fit, eval
// and next share: JSON name a_b is flag --a-b, and a declared alias (such
// as --flag for --flag-threshold) names the same flag. A flag not given
// leaves its setting out (the model's default).
type settingFlags struct {
	vals []*settingValue
}

// settingValue is one setting's flag: the text given and its value.
type settingValue struct {
	f    analysis.SpecField
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

func (v *settingValue) Set(s string) error {
	x, err := v.f.Parse(s, "--"+v.f.Flag())
	if err != nil {
		return errors.New(annotations.ErrorMessage(err))
	}
	v.text, v.x, v.set = s, x, true
	return nil
}

// IsBoolFlag makes a flag of a true/false setting take no value.
func (v *settingValue) IsBoolFlag() bool { return v.f.Type.Kind() == reflect.Bool }

// addSettingFlags adds the flags of every model's settings to fs.
func addSettingFlags(fs *flag.FlagSet) *settingFlags {
	sf := &settingFlags{}
	for _, f := range analysis.AllFields() {
		if f.Common() {
			continue
		}
		v := &settingValue{f: f}
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
// is none); the errors name the flag.
func (sf *settingFlags) apply(spec *analysis.FitSpec) error {
	for _, v := range sf.vals {
		if !v.set {
			continue
		}
		if err := v.f.SetGiven(spec, v.x, "--"+v.f.Flag()); err != nil {
			return err
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
	for i, a := range args {
		switch {
		case (a == "--model" || a == "-model") && i+1 < len(args):
			model = args[i+1]
		case strings.HasPrefix(a, "--model=") || strings.HasPrefix(a, "-model="):
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
		printSettingsHelp(out, fs, model)
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

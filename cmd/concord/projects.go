package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"concord/annotations"
)

const projectsHelp = `
  concord projects list [--json]             list projects with their counts
  concord projects create NAME --scheme SPEC create an empty project
  concord projects delete NAME               delete a project with all its labels and fits

list --json prints an array of {"name", "scheme", "items", "raters", "labels"}.
`

func runProjects(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "projects", "list|create|delete [NAME] [flags]", projectsHelp)
	dsn := dbFlag(fs)
	asJSON := fs.Bool("json", false, "list: print JSON")
	schemeSpec := fs.String("scheme", "", "create: the label scheme, e.g. ordinal:1..5")
	name := fs.String("name", "", "create/delete: project name (or give it as an argument)")
	pos, err := parseArgs(e, fs, args, "expected list, create or delete")
	if err != nil {
		return err
	}
	verb, rest := pos[0], pos[1:]
	if *name == "" && len(rest) == 1 {
		*name, rest = rest[0], nil
	}
	if len(rest) > 0 {
		return annotations.Errorf(annotations.EINVALID, "unexpected argument %q", rest[0])
	}
	switch verb {
	case "list", "create", "delete":
	default:
		return annotations.Errorf(annotations.EINVALID, "unknown projects action %q (expected list, create or delete)", verb)
	}
	st, err := openStore(ctx, e, *dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	switch verb {
	case "list":
		ps, err := st.ListProjects(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			type row struct {
				Name   string `json:"name"`
				Scheme string `json:"scheme"`
				Items  int    `json:"items"`
				Raters int    `json:"raters"`
				Labels int    `json:"labels"`
			}
			rows := make([]row, 0, len(ps))
			for _, p := range ps {
				rows = append(rows, row{p.Name, p.Scheme.String(), p.Items, p.Raters, p.Labels})
			}
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(rows)
		}
		if len(ps) == 0 {
			fmt.Fprintln(e.stdout, "No projects. Create one with concord import or concord projects create.")
			return nil
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSCHEME\tITEMS\tRATERS\tLABELS\tCREATED")
		for _, p := range ps {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", p.Name, p.Scheme, p.Items, p.Raters, p.Labels, p.CreatedAt.Format("2006-01-02 15:04"))
		}
		return tw.Flush()
	case "create":
		if *schemeSpec == "" {
			return annotations.Errorf(annotations.EINVALID, "create needs --scheme, e.g. --scheme ordinal:1..5")
		}
		s, err := annotations.ParseScheme(*schemeSpec)
		if err != nil {
			return err
		}
		p := &annotations.Project{Name: *name, Scheme: s}
		if err := p.Validate(); err != nil {
			return err
		}
		if err := st.CreateProject(ctx, p); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Created project %q (scheme %s)\n", p.Name, p.Scheme)
	case "delete":
		p, err := findProject(ctx, st, *name)
		if err != nil {
			return err
		}
		if err := st.DeleteProject(ctx, p.ID); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Deleted project %q\n", p.Name)
	}
	return nil
}

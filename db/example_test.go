package db_test

import (
	"context"
	"fmt"
	"log"

	"concord/annotations"
	"concord/db"
)

func ExampleOpen() {
	ctx := context.Background()
	// A SQLite file path, a postgres:// DSN, or ":memory:".
	st, err := db.Open(ctx, ":memory:", db.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	p := &annotations.Project{Name: "essays", Scheme: annotations.MustParseScheme("ordinal:1..4")}
	if err := st.CreateProject(ctx, p); err != nil {
		log.Fatal(err)
	}
	ds := &annotations.Dataset{Labels: []annotations.Label{
		{Item: "e1", Rater: "ann", Value: "3"},
		{Item: "e1", Rater: "bob", Value: "4"},
		{Item: "e2", Rater: "ann", Value: "1"},
	}}
	res, err := st.Import(ctx, p.ID, ds, annotations.ImportOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("added %d items, %d raters, %d labels\n", res.ItemsAdded, res.RatersAdded, res.LabelsAdded)

	// The same file again changes nothing.
	res, _ = st.Import(ctx, p.ID, ds, annotations.ImportOptions{})
	fmt.Printf("re-import: %d labels unchanged, %d added\n", res.LabelsUnchanged, res.LabelsAdded)

	// A different label for (e2, ann) is a conflict unless replacing.
	ds.Labels[2].Value = "2"
	_, err = st.Import(ctx, p.ID, ds, annotations.ImportOptions{})
	fmt.Println(annotations.ErrorCode(err))
	res, _ = st.Import(ctx, p.ID, ds, annotations.ImportOptions{Replace: true})
	fmt.Printf("replaced %d\n", res.LabelsReplaced)

	stats, _ := st.Stats(ctx, p.ID)
	fmt.Println(stats.Items, stats.Raters, stats.Labels, stats.LabelsPerItem, stats.Distribution)
	// Output:
	// added 2 items, 2 raters, 3 labels
	// re-import: 3 labels unchanged, 0 added
	// conflict
	// replaced 1
	// 2 2 3 1.5 map[2:1 3:1 4:1]
}

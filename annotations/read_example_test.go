package annotations_test

import (
	"fmt"
	"os"
	"strings"

	"concord/annotations"
)

// Reading a crowd-kit style file (task, worker, label), validating it
// against a scheme and writing it back out in wide form.
func ExampleReadLabels() {
	const file = `task,worker,label
266,amt001,1
266,amt002,1
934,amt001,0
934,amt003,0
`
	p, err := annotations.ReadLabels(strings.NewReader(file), annotations.ReadOptions{Name: "rte.csv"})
	if err != nil {
		fmt.Println(err)
		return
	}
	ds, err := annotations.BuildDataset(annotations.MustParseScheme("binary:pos=1"), p, nil, annotations.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Format, ds.Scheme, len(ds.Labels), "labels")
	if err := annotations.WriteCSVWide(os.Stdout, ds); err != nil {
		fmt.Println(err)
	}
	// Output:
	// csv-long binary:0,1,pos=1 4 labels
	// item_id,amt001,amt002,amt003
	// 266,1,1,
	// 934,0,,0
}

// A rejected file reports each problem with its file, line and column.
func ExampleBuildDataset_problems() {
	const file = `item_id,rater_id,label
1,r1,3
1,,4
2,r1,6
2,r2,2
2,r2,5
`
	p, err := annotations.ReadLabels(strings.NewReader(file), annotations.ReadOptions{Name: "scores.csv"})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = annotations.BuildDataset(annotations.MustParseScheme("ordinal:1..5"), p, nil, annotations.ReadOptions{})
	fmt.Println(err)
	// Output:
	// 3 problems:
	//   scores.csv:3, column "rater_id": empty rater id
	//   scores.csv:4, column "label": unknown level "6" for scheme ordinal:1..5 (expected one of 1, 2, 3, 4, 5)
	//   scores.csv:6, column "rater_id": duplicate label for item "2" by rater "r2": another label was given at line 5 (accept repeated labels with --duplicates keep|first, or "duplicates" in the API)
}

package confusion_test

import (
	"context"
	"fmt"

	"concord/multirater"
	"concord/multirater/confusion"
)

// Three raters label forty images as cat or dog; raters a and b agree
// (b errs once), rater c says cat whatever the image. The consensus follows
// a and b, and c is flagged as a spammer: the rows of c's confusion matrix
// (what c says of cats, what c says of dogs) are alike.
func ExampleFit() {
	data := &confusion.Data{RaterIDs: []string{"a", "b", "c"}, Classes: []string{"cat", "dog"}}
	for i := 0; i < 40; i++ {
		data.ItemIDs = append(data.ItemIDs, fmt.Sprintf("img%02d", i))
		class := i % 2
		b := class
		if i == 7 {
			b = 0
		}
		data.Labels = append(data.Labels,
			multirater.Rating{Item: i, Rater: 0, Level: class},
			multirater.Rating{Item: i, Rater: 1, Level: b},
			multirater.Rating{Item: i, Rater: 2, Level: 0})
	}
	res, err := confusion.Fit(context.Background(), data, confusion.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, it := range res.Items[6:8] {
		fmt.Printf("%s: %s (P = %.2f)\n", it.ID, it.Class, it.ClassProbs[it.Class])
	}
	for _, r := range res.Raters {
		fmt.Printf("rater %s: accuracy %.2f, P(dog labelled cat) %.2f, spam score %.2f, spammer %v\n",
			r.ID, r.Accuracy.Mean, r.ConfusionProbs[1][0].Mean, *r.SpamScore, r.Spammer)
	}
	// Output:
	// img06: cat (P = 1.00)
	// img07: dog (P = 1.00)
	// rater a: accuracy 0.97, P(dog labelled cat) 0.05, spam score 0.95, spammer false
	// rater b: accuracy 0.95, P(dog labelled cat) 0.09, spam score 0.91, spammer false
	// rater c: accuracy 0.56, P(dog labelled cat) 0.88, spam score 0.12, spammer true
}

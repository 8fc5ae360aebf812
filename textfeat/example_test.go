package textfeat_test

import (
	"encoding/json"
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"concord/textfeat"
)

func ExampleTokenize() {
	text := "Four month old boy, twenty-one days of fever; the patient's 6-year-old sister isn't ill."
	fmt.Println(textfeat.Tokenize(text, textfeat.Options{}))
	fmt.Println(textfeat.Tokenize(text, textfeat.Options{Stem: true}))
	// Output:
	// [4_month_old boy 21 days fever patient 6_year_old sister ill]
	// [4_month_old boy 21 day fever patient 6_year_old sister ill]
}

func ExampleTerms() {
	fmt.Println(textfeat.Terms("Chest pain radiating to the left arm", textfeat.Options{Bigrams: true}))
	// Output:
	// [chest pain radiating left arm chest pain pain radiating radiating left left arm]
}

func ExampleFit() {
	docs := []string{
		"Four month old with fever and cough.",
		"4-month-old, cough for two days.",
		"Six year old with a rash.",
	}
	v, vecs, err := textfeat.Fit(docs, textfeat.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.Vocabulary())
	for _, x := range vecs {
		fmt.Printf("%v %.4f norm %.0f\n", x.Idx, x.Val, x.Norm())
	}
	// Output:
	// [2 4_month_old 6_year_old cough days fever rash]
	// [1 3 5] [0.5774 0.5774 0.5774] norm 1
	// [0 1 3 4] [0.5000 0.5000 0.5000 0.5000] norm 1
	// [2 6] [0.7071 0.7071] norm 1
}

func ExampleVectorizer_Transform() {
	v, _, err := textfeat.Fit([]string{"fever and cough", "cough and rash", "rash"}, textfeat.Options{Weighting: textfeat.TFIDF})
	if err != nil {
		log.Fatal(err)
	}
	// Words outside the training vocabulary ("wheeze") are ignored.
	x := v.Transform("Cough, cough and wheeze")
	fmt.Println(x.Idx, x.Val)
	fmt.Println(v.Transform("wheeze").NNZ())
	// Output:
	// [0] [1]
	// 0
}

func ExampleVectorizer_MarshalJSON() {
	v, _, err := textfeat.Fit([]string{"fever and cough", "cough and rash"}, textfeat.Options{MinDF: 2})
	if err != nil {
		log.Fatal(err)
	}
	saved, err := json.Marshal(v)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(saved))

	var restored textfeat.Vectorizer
	if err := json.Unmarshal(saved, &restored); err != nil {
		log.Fatal(err)
	}
	fmt.Println(restored.Transform("COUGH!"))
	// Output:
	// {"format":"concord/textfeat.Vectorizer","version":1,"tokenizer_version":1,"stop_words":"SMART-571","options":{"min_df":2,"max_features":0,"weighting":"count","stem":false,"bigrams":false,"keep_stop_words":false},"num_docs":2,"terms":["cough"],"doc_freq":[2]}
	// {[0] [1]}
}

func ExampleLinearKernelTo() {
	_, vecs, err := textfeat.Fit([]string{"fever cough", "cough rash", "fever cough", ""}, textfeat.Options{})
	if err != nil {
		log.Fatal(err)
	}
	var k mat.SymDense // empty: resized by LinearKernelTo
	textfeat.LinearKernelTo(&k, vecs)
	fmt.Printf("%.2f\n", mat.Formatted(&k))
	// Output:
	// ⎡1.00  0.50  1.00  0.00⎤
	// ⎢0.50  1.00  0.50  0.00⎥
	// ⎢1.00  0.50  1.00  0.00⎥
	// ⎣0.00  0.00  0.00  0.00⎦
}

func ExampleCrossKernelTo() {
	v, train, err := textfeat.Fit([]string{"fever cough", "cough rash", "headache"}, textfeat.Options{})
	if err != nil {
		log.Fatal(err)
	}
	newDocs := v.TransformAll([]string{"Rash and cough.", "Headache, fever."})
	var c mat.Dense
	textfeat.CrossKernelTo(&c, newDocs, train) // new documents x training documents
	fmt.Printf("%.3f\n", mat.Formatted(&c))
	// Output:
	// ⎡0.500  1.000  0.000⎤
	// ⎣0.500  0.000  0.707⎦
}

func ExampleRBFKernelTo() {
	_, vecs, err := textfeat.Fit([]string{"fever cough", "cough rash", "headache"}, textfeat.Options{})
	if err != nil {
		log.Fatal(err)
	}
	var k mat.SymDense
	textfeat.RBFKernelTo(&k, vecs, 1) // exp(-||x_i - x_j||^2)
	fmt.Printf("%.4f\n", mat.Formatted(&k))
	// Output:
	// ⎡1.0000  0.3679  0.1353⎤
	// ⎢0.3679  1.0000  0.1353⎥
	// ⎣0.1353  0.1353  1.0000⎦
}

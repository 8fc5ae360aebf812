// Package textfeat turns item texts into normalised bag-of-words vectors as in
// Rogers et al. sec. 4, and computes kernels between them. It imports nothing
// of concord's.
//
// Rogers et al. represent each clinical report by its document-feature
// co-occurrence counts over "all of the words which occur in the records
// excluding a standard list of English stop words", lower-cased, with "all
// numbers converted to digits" and age descriptions joined into one token
// ("Four month old would become 4_month_old"), and use the linear covariance
// x_i^T x_j "after the input vectors were normalised to have unit norm".
// Fit with the zero Options reproduces exactly that; stemming, bigrams,
// binary and tf-idf weighting and vocabulary limits are options.
//
// # Tokenisation
//
// Tokenize applies these steps in order:
//
//  1. Unicode normalisation to NFC (golang.org/x/text/unicode/norm), so that
//     precomposed and decomposed accents ("é", "e\u0301") are the same.
//  2. Full Unicode lower-casing (golang.org/x/text/cases, language-neutral:
//     Greek final sigma, "ΟΔΟΣ" -> "οδος"; "İ" -> "i̇"). Accents are kept.
//  3. Splitting into words: a word is a maximal run of letters and numbers
//     (any script) with the combining marks that follow them. Inside a word,
//     between two letters or numbers, are allowed: apostrophes (', U+2019,
//     U+02BC, all kept as '), hyphens (-, U+2010, U+2011; see below), a
//     decimal point between ASCII digits ("0.4") and a thousands comma
//     before exactly three digits, which is dropped ("1,000,000" ->
//     "1000000"). Format characters such as the soft hyphen and zero-width
//     joiners are ignored ("co\u00adoperate" -> "cooperate"); the zero-width
//     space separates. Everything else (white space, other punctuation,
//     dashes, slashes, symbols, emoji, underscores) separates words and is
//     dropped, as are apostrophes and hyphens at the edge of a word.
//  4. Possessives: a final 's is removed ("patient's" -> "patient") unless
//     the word is in the stop-word list, which holds contractions such as
//     "it's", "he's" and "let's"; other contractions ("don't") stay whole.
//  5. Number words to digits: a phrase of English cardinal number words is
//     replaced by its value, "twenty one" and "twenty-one" -> "21", "one
//     hundred and five" -> "105", "nineteen hundred" -> "1900", "three
//     million four hundred thousand" -> "3400000" (grammar in parseNumber:
//     units, teens, tens, hundred, thousand, million, billion, trillion, with
//     "and" after hundred or a scale). A word that cannot continue the phrase
//     starts a new one: "one two" -> "1 2". Only words are converted; digits
//     followed by a scale word stay as they are ("5 million"). Ordinal words
//     are not converted: "first", "second" and "third" are SMART stop words
//     and are removed, the others stay words ("fourth"); a tens word followed
//     by first..ninth is a compound ordinal and stays words too
//     ("twenty-first", "thirty second"). Other cardinals before such words
//     are converted, so "one second" gives "1" (and the stop word "second").
//     Fractions follow from the rules: "two-thirds" -> "2-thirds". "a"/"an"
//     are not numbers. The pronoun "one" becomes "1" like any other number
//     word.
//  6. Age phrases: NUMBER UNIT old, with any mix of spaces and hyphens between
//     the three, becomes the single token NUMBER_UNIT_old, where NUMBER is
//     ASCII digits with an optional decimal point (after step 5, so number
//     words count), UNIT is year, month, week, day or hour in the singular
//     (plurals and yr, yrs, mo, mos, wk, wks, hr, hrs are accepted), and "olds"
//     counts as "old": "Four month old", "4-month-old", "four-month old" ->
//     4_month_old; "6 years old", "six-year-olds" -> 6_year_old; "1.5 yr old"
//     -> 1.5_year_old. The token is cut from hyphenated neighbours
//     ("4-month-old-boy" -> 4_month_old, boy). "4 months" without "old"
//     stays two tokens.
//  7. Hyphenated compounds are joined back into one token: "follow-up",
//     "x-ray", "covid-19", "1-sided".
//  8. Stop words: tokens in the SMART list (stopwords/smart.txt, 570
//     distinct words, including single letters; see StopWords) are removed
//     unless Options.KeepStopWords. Number words are converted before this
//     step, so "one" (a SMART stop word) survives as "1", and "old" (also
//     one) survives inside age tokens.
//  9. Stemming, if Options.Stem: the Snowball English (Porter2) stemmer of
//     github.com/kljensen/snowball, applied to tokens written in Latin
//     letters only (with apostrophes and hyphens), never to numbers, age
//     tokens or other scripts. It agrees with NLTK's SnowballStemmer on the
//     1,854-word test list.
//
// Terms adds, if Options.Bigrams, the pairs of consecutive tokens (after
// stop-word removal and stemming) joined by a space. Tokens never contain
// white space, so a term with a space is always a bigram.
//
// # Vocabulary and weighting
//
// Fit counts, for every term, its total number of occurrences and the number
// of training documents containing it (df). Terms with df < MinDF are
// dropped; then, if MaxFeatures is positive, the MaxFeatures terms with the
// largest total count are kept, ties broken by larger df and then byte
// order. Feature i is the i-th kept term in byte order (as in scikit-learn).
//
// A document's vector has, for each vocabulary term t it contains (c times),
// the weight c (Count, the default), 1 (Binary) or c * idf(t) (TFIDF) with
// the smoothed idf(t) = ln((1 + n) / (1 + df(t))) + 1 over the n training
// documents (scikit-learn's TfidfVectorizer defaults; agreement to 1e-12 is
// tested). The vector is then divided by its L2 norm. A document without any
// vocabulary term (empty, only stop words or only unseen words) is the zero
// vector, with no entries: its linear-kernel row is zero, and its RBF-kernel
// entries are exp(-gamma) against every unit vector.
//
// Terms of new documents that are not in the vocabulary are ignored. The
// fitted Vectorizer (options, terms, document frequencies, number of training
// documents) is saved and restored with encoding/json, so that new documents
// are featurised exactly as the training ones; the saved form records
// TokenizerVersion, the stop list and the stemmer, and a vectorizer saved
// under other rules is refused.
//
// # Kernels
//
// LinearKernelTo (the paper's choice), CrossKernelTo (new documents against
// training documents), RBFKernelTo and RBFCrossKernelTo write Gram matrices
// into gonum matrices. They work from the sparse vectors through an inverted
// index, in parallel over rows, with results independent of scheduling. Gram
// matrices of the same items can be summed with (*mat.SymDense).AddSym to
// combine text with numeric covariates.
//
// # Limitations
//
// Words are not segmented in scripts written without spaces (Chinese,
// Japanese, Thai): a run of such letters is one token. Stop words and
// stemming are English only. Abbreviations with periods split into letters
// ("U.S." -> "u", "s", both stop words). Clinical shorthand such as "y/o" is
// not recognised as an age phrase. Spelling variants ("e-mail", "email") are
// different terms.
package textfeat

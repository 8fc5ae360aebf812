package textfeat

import (
	"slices"
	"testing"
)

func TestTokenize(t *testing.T) {
	keep := Options{KeepStopWords: true}
	stem := Options{Stem: true}
	for _, test := range []struct {
		name string
		text string
		opts Options
		want []string
	}{
		// Number words to digits (Rogers et al. sec. 4: "converting all numbers to digits").
		{"tens unit", "twenty one", Options{}, []string{"21"}},
		{"tens-unit", "Twenty-One", Options{}, []string{"21"}},
		{"hundred and", "one hundred and five", Options{}, []string{"105"}},
		{"hundred no and", "one hundred five", Options{}, []string{"105"}},
		{"teen hundred", "nineteen hundred", Options{}, []string{"1900"}},
		{"thousand and", "two thousand and twenty", Options{}, []string{"2020"}},
		{"scales", "three million four hundred thousand", Options{}, []string{"3400000"}},
		{"full", "one thousand two hundred thirty-four", Options{}, []string{"1234"}},
		{"sequence", "one two three", Options{}, []string{"1", "2", "3"}},
		{"zero", "zero", Options{}, []string{"0"}},
		{"bare scale", "a thousand", Options{}, []string{"1000"}},
		{"increasing scales split", "thousand million", Options{}, []string{"1000", "1000000"}},
		{"and between units", "five and six", Options{}, []string{"5", "6"}},
		{"dangling and", "hundred and", Options{}, []string{"100"}},
		{"and kept as word", "hundred and", keep, []string{"100", "and"}},
		{"compound ordinal", "twenty-first century", Options{}, []string{"twenty-first", "century"}},
		{"spaced compound ordinal", "twenty first", keep, []string{"twenty", "first"}},
		{"tens and second", "thirty second", keep, []string{"thirty", "second"}},
		{"unit and second", "one second", keep, []string{"1", "second"}},
		{"plural seconds", "thirty seconds", Options{}, []string{"30", "seconds"}},
		{"fraction", "two-thirds", Options{}, []string{"2-thirds"}},
		{"ordinal stop word", "first third", Options{}, nil},
		{"ordinal kept", "fourth", Options{}, []string{"fourth"}},
		{"number in compound", "one-sided", Options{}, []string{"1-sided"}},
		{"plural not a number", "hundreds of patients", Options{}, []string{"hundreds", "patients"}},
		{"number words are stop words but digits are not", "one", keep, []string{"1"}},

		// Age phrases (Rogers et al. sec. 4: "Four month old would become 4_month_old").
		{"paper example", "Four month old", Options{}, []string{"4_month_old"}},
		{"hyphenated digits", "4-month-old", Options{}, []string{"4_month_old"}},
		{"mixed", "four-month old", Options{}, []string{"4_month_old"}},
		{"mixed 2", "4 month-old", Options{}, []string{"4_month_old"}},
		{"plural years", "6 years old", Options{}, []string{"6_year_old"}},
		{"olds", "six-year-olds", Options{}, []string{"6_year_old"}},
		{"week", "2 week old infant", Options{}, []string{"2_week_old", "infant"}},
		{"day", "3 day-old", Options{}, []string{"3_day_old"}},
		{"hours", "Ten hours old", Options{}, []string{"10_hour_old"}},
		{"abbreviation mo", "18 mo old", Options{}, []string{"18_month_old"}},
		{"decimal", "1.5 yr old", Options{}, []string{"1.5_year_old"}},
		{"two-word number", "twenty one year old", Options{}, []string{"21_year_old"}},
		{"possessive", "a 4-month-old's rash", Options{}, []string{"4_month_old", "rash"}},
		{"unlinked from next", "4-month-old-boy", Options{}, []string{"4_month_old", "boy"}},
		{"unlinked from previous", "covid-19-year-old", Options{}, []string{"covid", "19_year_old"}},
		{"no old", "4 months", Options{}, []string{"4", "months"}},
		{"no number", "year old", keep, []string{"year", "old"}},
		{"in sentence", "Six year old boy, 3 weeks of fever.", Options{}, []string{"6_year_old", "boy", "3", "weeks", "fever"}},
		{"age not stemmed", "4-month-old infants", stem, []string{"4_month_old", "infant"}},

		// Stop words (SMART list) and apostrophes.
		{"stop words", "The patient is in the room", Options{}, []string{"patient", "room"}},
		{"keep stop words", "The patient is in the room", keep, []string{"the", "patient", "is", "in", "the", "room"}},
		{"contraction stop word", "it's", Options{}, nil},
		{"contraction kept intact", "It's", keep, []string{"it's"}},
		{"curly apostrophe", "don\u2019t", keep, []string{"don't"}},
		{"modifier apostrophe", "don\u02bct", keep, []string{"don't"}},
		{"possessive", "patient's", Options{}, []string{"patient"}},
		{"plural possessive", "patients' rooms", Options{}, []string{"patients", "rooms"}},
		{"inner apostrophe", "O'Brien", Options{}, []string{"o'brien"}},
		{"quotes", "'quoted' \"text\"", Options{}, []string{"quoted", "text"}},
		{"single letters", "U.S. e.g.", Options{}, nil},

		// Punctuation, hyphens and digits.
		{"punctuation", "fever, cough; vomiting. (rash)!", Options{}, []string{"fever", "cough", "vomiting", "rash"}},
		{"hyphen compound", "follow-up x-ray", Options{}, []string{"follow-up", "x-ray"}},
		{"unicode hyphens", "follow\u2010up x\u2011ray", Options{}, []string{"follow-up", "x-ray"}},
		{"dashes separate", "heart\u2014lung heart\u2013lung heart--lung", Options{}, []string{"heart", "lung", "heart", "lung", "heart", "lung"}},
		{"leading/trailing hyphen", "-5 degrees- pre-", Options{}, []string{"5", "degrees", "pre"}},
		{"alphanumeric", "covid-19 $10m h2o", Options{}, []string{"covid-19", "10m", "h2o"}},
		{"thousands", "1,000 patients and 1,000,000 cells", Options{}, []string{"1000", "patients", "1000000", "cells"}},
		{"not thousands", "1,2,3 and 12,3456", Options{}, []string{"1", "2", "3", "12", "3456"}},
		{"decimal", "0.4 percent, end.", Options{}, []string{"0.4", "percent", "end"}},
		{"slash", "9/11", Options{}, []string{"9", "11"}},
		{"digit range", "113-107", Options{}, []string{"113-107"}},
		{"soft hyphen", "co\u00adoperate", Options{}, []string{"cooperate"}},
		{"zero-width space", "heart\u200blung", Options{}, []string{"heart", "lung"}},
		{"emoji and symbols", "fever 🤒 + rash © 2020", Options{}, []string{"fever", "rash", "2020"}},
		{"underscore", "4_month_old", Options{}, []string{"4_month_old"}},
		{"empty", "", Options{}, nil},
		{"only punctuation", " ... --- !!! ", Options{}, nil},

		// Unicode: NFC, full lower-casing, other scripts.
		{"precomposed", "Café", Options{}, []string{"café"}},
		{"decomposed", "Cafe\u0301", Options{}, []string{"café"}},
		{"upper accents", "NAÏVE RÉSUMÉ", Options{}, []string{"naïve", "résumé"}},
		{"greek final sigma", "ΟΔΟΣ ΟΔΟΣ", Options{}, []string{"οδος", "οδος"}},
		{"cyrillic", "Москва, Россия", Options{}, []string{"москва", "россия"}},
		{"german", "Straße", Options{}, []string{"straße"}},
		{"dotted capital I", "İstanbul", Options{}, []string{"i\u0307stanbul"}},
		{"cjk run", "東京タワー is tall", Options{}, []string{"東京タワー", "tall"}},
		{"arabic", "مرحبا بالعالم", Options{}, []string{"مرحبا", "بالعالم"}},
		{"devanagari marks", "नमस्ते दुनिया", Options{}, []string{"नमस्ते", "दुनिया"}},
		{"leading mark dropped", "\u0301abc", Options{}, []string{"abc"}},

		// Stemming (Snowball English / Porter2) of Latin-script tokens only.
		{"stem", "Running patients generously", stem, []string{"run", "patient", "generous"}},
		{"stem hyphenated", "follow-ups", stem, []string{"follow-up"}},
		{"no stem of numbers and other scripts", "2020 москва 10m", stem, []string{"2020", "москва", "10m"}},
		{"stem after stop words", "the running", stem, []string{"run"}},
	} {
		got := Tokenize(test.text, test.opts)
		if !slices.Equal(got, test.want) {
			t.Errorf("%s: Tokenize(%q, %+v) = %q, want %q", test.name, test.text, test.opts, got, test.want)
		}
	}
}

func TestTerms(t *testing.T) {
	for _, test := range []struct {
		text string
		opts Options
		want []string
	}{
		{"chest pain radiating to the left arm", Options{}, []string{"chest", "pain", "radiating", "left", "arm"}},
		{"chest pain radiating to the left arm", Options{Bigrams: true},
			[]string{"chest", "pain", "radiating", "left", "arm", "chest pain", "pain radiating", "radiating left", "left arm"}},
		{"Chest pains", Options{Bigrams: true, Stem: true}, []string{"chest", "pain", "chest pain"}},
		{"pain", Options{Bigrams: true}, []string{"pain"}},
		{"the", Options{Bigrams: true}, nil},
	} {
		got := Terms(test.text, test.opts)
		if !slices.Equal(got, test.want) {
			t.Errorf("Terms(%q, %+v) = %q, want %q", test.text, test.opts, got, test.want)
		}
	}
}

func TestStopWords(t *testing.T) {
	words := StopWords()
	if len(words) != 570 {
		t.Fatalf("len(StopWords()) = %d, want 570 (the SMART list: 571 entries, \"would\" twice)", len(words))
	}
	if !slices.IsSorted(words) {
		t.Error("StopWords() not sorted")
	}
	for _, w := range []string{"a", "the", "and", "it's", "don't", "zero", "would", "z"} {
		if !IsStopWord(w) {
			t.Errorf("IsStopWord(%q) = false, want true", w)
		}
	}
	for _, w := range []string{"patient", "fever", "4_month_old", "The", ""} {
		if IsStopWord(w) {
			t.Errorf("IsStopWord(%q) = true, want false", w)
		}
	}
	// With stop-word removal on, no token is a stop word, whatever the text.
	for _, w := range words {
		if got := Tokenize(w+" fever", Options{}); !slices.Equal(got, []string{"fever"}) && !isNumberWord(w) {
			t.Errorf("Tokenize(%q) = %q, want [fever]", w+" fever", got)
		}
	}
}

func isNumberWord(w string) bool { _, ok := numberWords[w]; return ok }

func TestParseNumber(t *testing.T) {
	for _, test := range []struct {
		words  []string
		digits string
		end    int
		ok     bool
	}{
		{[]string{"seven"}, "7", 1, true},
		{[]string{"ninety", "nine", "bottles"}, "99", 2, true},
		{[]string{"nine", "hundred", "and", "ninety", "nine", "thousand"}, "999000", 6, true},
		{[]string{"nine", "hundred", "ninety", "nine", "thousand", "nine", "hundred", "ninety", "nine"}, "999999", 9, true},
		{[]string{"five", "trillion"}, "5000000000000", 2, true},
		{[]string{"twelve", "hundred", "and", "fish"}, "1200", 2, true},
		{[]string{"eleven", "three"}, "11", 1, true},
		{[]string{"twenty", "ten"}, "20", 1, true},
		{[]string{"hundred", "hundred"}, "100", 1, true},
		{[]string{"thirty", "second"}, "", 0, false},
		{[]string{"three", "second"}, "3", 1, true},
		{[]string{"and", "five"}, "", 0, false},
		{[]string{"fish"}, "", 0, false},
	} {
		parts := make([]part, len(test.words))
		for i, w := range test.words {
			parts[i] = part{text: w}
		}
		digits, end, ok := parseNumber(parts, 0)
		if digits != test.digits || end != test.end || ok != test.ok {
			t.Errorf("parseNumber(%q) = %q, %d, %v, want %q, %d, %v", test.words, digits, end, ok, test.digits, test.end, test.ok)
		}
	}
}

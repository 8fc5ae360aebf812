package numeric

import "math"

// roundSig rounds x to digits significant digits (0, NaN and infinities
// as they are).
func roundSig(x float64, digits int) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	e := math.Floor(math.Log10(math.Abs(x)))
	p := math.Pow(10, float64(digits-1)-e)
	if math.IsInf(p, 0) || p == 0 {
		return x
	}
	return math.Round(x*p) / p
}

// Round6 rounds to 6 significant digits, Round7 to 7, for compact JSON.
func Round6(x float64) float64 { return roundSig(x, 6) }

// Round7 rounds to 7 significant digits.
func Round7(x float64) float64 { return roundSig(x, 7) }

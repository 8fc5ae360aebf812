package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"concord/annotations"
	"concord/multirater"
)

// rangesData returns a small dataset for a model: 10 items, 3 raters each
// (a seeded generator; labels loosely follow a latent score so that every
// class and level occurs), items with two numeric covariates.
func rangesData(t *testing.T, model string) *annotations.Dataset {
	t.Helper()
	spec := map[string]string{
		ModelOrdinal: "ordinal:1..4", ModelClassification: "nominal:a,b,c", ModelConfusion: "nominal:a,b,c",
		ModelBounded: "bounded:0..1", ModelRobust: "binary:n,p,pos=p", ModelAUC: "binary:n,p,pos=p",
	}[model]
	sc, err := annotations.ParseScheme(spec)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(36, 1))
	ds := &annotations.Dataset{Scheme: sc}
	const n = 12
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("i%d", i)
		z := rng.NormFloat64()
		ds.Items = append(ds.Items, annotations.Item{ID: id, Covariates: map[string]float64{"x1": z + 0.5*rng.NormFloat64(), "x2": rng.NormFloat64()}})
		for r := 0; r < 3; r++ {
			y := z + 0.7*rng.NormFloat64()
			var v string
			switch sc.Kind {
			case annotations.Bounded:
				v = fmt.Sprintf("%.3f", 1/(1+math.Exp(-y)))
			case annotations.Binary:
				v = "n"
				if i%2 == 0 && y > -1 || y > 1 {
					v = "p"
				}
			default:
				k := sc.K()
				lev := min(max(int(math.Floor((y+2)*float64(k)/4)), 0), k-1)
				v = sc.Codes()[lev]
			}
			ds.Labels = append(ds.Labels, annotations.Label{Item: id, Rater: fmt.Sprintf("r%d", r), Value: v})
		}
	}
	return ds
}

// workSizes are tried at their minimum only: their maximum is work
// (bounded by CheckWork), not numerics.
var workSizes = []string{"chains", "samples", "burnin", "thin", "restarts", "keep_draws"}

// TestSettingsRanges is the property test of the declared ranges
// (Settings): for every model and engine that reads a numeric setting, the
// setting at each end of its range and at two seeded log-uniform values
// inside (work sizes at their minimum), on small data with the least work
// (2 chains of 2 draws, no burn-in, one restart), is accepted by Validate and
// either fits, with a result that encodes as JSON (no NaN or Inf), or fails
// with an error naming the setting; just outside the range Validate refuses
// it, naming it. No value may panic.
func TestSettingsRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 2))
	for _, st := range Settings() {
		for _, m := range Models() {
			for _, eng := range m.Engines {
				if !st.Applies(m.Name, eng) {
					continue
				}
				ds := rangesData(t, m.Name)
				for _, v := range rangeValues(st, rng) {
					name := fmt.Sprintf("%s=%v/%s/%s", st.Field, v, m.Name, eng)
					t.Run(name, func(t *testing.T) {
						checkSettingFits(t, ds, m.Name, eng, st, v)
					})
				}
				for _, v := range outside(st) {
					spec := smallSpec(t, m.Name, eng, st.Field, v)
					err := spec.Validate()
					if err == nil || !strings.Contains(annotations.ErrorMessage(err), st.Field) {
						t.Errorf("%s = %v for %s/%s (outside %s): Validate says %v; want a refusal naming %s", st.Field, v, m.Name, eng, st.Range(), err, st.Field)
					}
				}
			}
		}
	}
}

// TestThresholdsRange: the ordinal model's fixed thresholds at the ends of
// their range fit under both deterministic engines; past them, and a list
// longer than any scheme's, are refused without echoing the list.
func TestThresholdsRange(t *testing.T) {
	ds := rangesData(t, ModelOrdinal)
	for _, eng := range []string{multirater.EngineEP, multirater.EngineLaplace} {
		for _, th := range [][]float64{{-MaxThreshold, 0, MaxThreshold}, {-MaxThreshold, -MaxThreshold + 1e-3, -MaxThreshold + 2e-3}} {
			spec := FitSpec{Model: ModelOrdinal, Engine: eng, Thresholds: th, Restarts: 1, KeepDraws: 10, Seed: 1}
			res, err := Fit(context.Background(), ds, spec, nil)
			if err != nil {
				if !strings.Contains(annotations.ErrorMessage(err), "thresholds") {
					t.Errorf("%s, thresholds %v: %v; want a fit or an error naming thresholds", eng, th, err)
				}
				continue
			}
			if _, err := json.Marshal(res); err != nil {
				t.Errorf("%s, thresholds %v: the result does not encode: %v", eng, th, err)
			}
		}
	}
	for _, th := range [][]float64{{-MaxThreshold * 1.01, 0, 1}, {math.NaN(), 0, 1}, make([]float64, MaxThresholds+1)} {
		err := FitSpec{Model: ModelOrdinal, Engine: multirater.EngineEP, Thresholds: th}.Validate()
		if msg := annotations.ErrorMessage(err); err == nil || !strings.Contains(msg, "thresholds") || len(msg) > 300 {
			t.Errorf("%d thresholds from %v: Validate says %v; want a short refusal naming thresholds", len(th), th[0], err)
		}
	}
}

// rangeValues are the values tried inside st's range: its ends and two
// log-uniform draws between them (work sizes: the minimum).
func rangeValues(st Setting, rng *rand.Rand) []float64 {
	hi := st.Max
	if st.MaxOpen {
		hi = math.Nextafter(st.Max, st.Min)
	}
	if slices.Contains(workSizes, st.Field) {
		return []float64{st.Min}
	}
	vals := []float64{st.Min, hi}
	lo := st.Min
	if lo <= 0 {
		lo = 1e-6
	}
	for k := 0; k < 2; k++ {
		v := math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo)))
		if st.Int {
			v = math.Round(v)
		}
		vals = append(vals, min(max(v, st.Min), hi))
	}
	return vals
}

// outside are values just outside st's range.
func outside(st Setting) []float64 {
	if st.Int {
		out := []float64{st.Max + 1}
		// (FitSpec's negative burnin is none, the API's and CLI's 0.)
		if (st.Min-1 != 0 || st.Zero == "") && st.Field != "burnin" {
			out = append(out, st.Min-1)
		}
		return out
	}
	out := []float64{math.NaN(), math.Inf(1), st.Max * 1.5}
	if st.MaxOpen {
		out = append(out, st.Max)
	}
	if st.Min > 0 {
		out = append(out, st.Min/2)
	} else {
		out = append(out, -1e-9)
	}
	return out
}

// smallSpec is the least work for model and engine, with setting field
// set to v (through JSON, as the API stores it).
func smallSpec(t *testing.T, model, eng, field string, v float64) FitSpec {
	t.Helper()
	spec := FitSpec{Model: model, Engine: eng, Seed: 1}
	if LookupSetting("keep_draws").Applies(model, eng) {
		spec.KeepDraws = 10
	}
	switch {
	case model == ModelAUC:
		spec.Gamma = "3"
	case eng == multirater.EngineGibbs:
		spec.Chains, spec.Samples, spec.Burnin = 2, 2, -1
	case model != ModelConfusion:
		spec.Restarts = 1
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		// JSON has no NaN or Inf: set the field directly.
		switch field {
		case "gamma":
			spec.Gamma = GammaSpec(fmt.Sprint(v))
			return spec
		}
		b, _ := json.Marshal(map[string]float64{field: 1})
		if err := json.Unmarshal(b, &spec); err != nil {
			t.Fatal(err)
		}
		return setNonFinite(t, spec, field, v)
	}
	b, err := json.Marshal(map[string]float64{field: v})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatalf("%s = %v: %v", field, v, err)
	}
	return spec
}

// setNonFinite sets a float setting to NaN or Inf (JSON cannot say them).
func setNonFinite(t *testing.T, s FitSpec, field string, v float64) FitSpec {
	t.Helper()
	for _, f := range AllFields() {
		if f.Name != field {
			continue
		}
		switch dst := f.Value(&s); dst.Kind() {
		case reflect.Float64:
			dst.SetFloat(v)
			return s
		case reflect.Pointer:
			dst.Set(reflect.ValueOf(&v))
			return s
		}
	}
	t.Fatalf("setting %q: no float field", field)
	return s
}

// checkSettingFits fits ds with setting st at v.
func checkSettingFits(t *testing.T, ds *annotations.Dataset, model, eng string, st Setting, v float64) {
	t.Helper()
	spec := smallSpec(t, model, eng, st.Field, v)
	if err := spec.Validate(); err != nil {
		t.Fatalf("Validate refuses a value inside the declared range %s: %v", st.Range(), err)
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	res, err := Fit(context.Background(), ds, spec, nil)
	if err != nil {
		// The list of every setting in effect that a numerical failure
		// carries does not count as naming the setting.
		msg := annotations.ErrorMessage(err)
		if i := strings.Index(msg, "at these settings ("); i >= 0 {
			if j := strings.Index(msg[i:], "): "); j >= 0 {
				msg = msg[:i] + msg[i+j:]
			}
		}
		if !strings.Contains(msg, st.Field) {
			t.Fatalf("fit failed without naming %s: %v", st.Field, err)
		}
		t.Logf("refused, naming the setting: %v", err)
		return
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatalf("the result does not encode (NaN or Inf stored?): %v", err)
	}
}

// TestKernelRanges is TestSettingsRanges for the numbers of a kernel
// specification (KernelSettings): each at both ends of its declared range,
// in every model that takes a kernel, fits or fails naming it; outside,
// Validate refuses it naming it.
func TestKernelRanges(t *testing.T) {
	kspec := map[string]string{
		"kernel rbf gamma": "rbf:gamma=%v", "kernel text-rbf gamma": "text-rbf:gamma=%v", "kernel ard gamma": "ard:gamma=%v,%[1]v",
		"kernel const variance": "linear+const:%v", "kernel white variance": "white:%v",
	}
	for _, st := range KernelSettings() {
		format, ok := kspec[st.Field]
		if !ok {
			t.Fatalf("setting %q: no kernel to try it in", st.Field)
		}
		for _, m := range Models() {
			for _, eng := range m.Engines {
				if m.Name == ModelAUC && st.Field == "kernel text-rbf gamma" {
					continue // gp scores read covariates only
				}
				ds := rangesData(t, m.Name)
				for i := range ds.Items {
					ds.Items[i].Text = fmt.Sprintf("word%d shared words %d", i%3, i%2)
				}
				for _, v := range []float64{st.Min, st.Max} {
					t.Run(fmt.Sprintf("%s=%v/%s/%s", st.Field, v, m.Name, eng), func(t *testing.T) {
						spec := smallSpec(t, m.Name, eng, "seed", 1)
						// (No exponent: "1e+06" would split at the +.)
						spec.Kernel = fmt.Sprintf(format, strconv.FormatFloat(v, 'f', -1, 64))
						if m.Name == ModelAUC {
							spec.Scores = ScoresGP
						}
						if err := spec.Validate(); err != nil {
							t.Fatalf("Validate refuses %s inside its range %s: %v", spec.Kernel, st.Range(), err)
						}
						defer func() {
							if r := recover(); r != nil {
								t.Fatalf("panic: %v", r)
							}
						}()
						res, err := Fit(context.Background(), ds, spec, nil)
						if err != nil {
							if !strings.Contains(annotations.ErrorMessage(err), "kernel") {
								t.Fatalf("fit failed without naming the kernel: %v", err)
							}
							t.Logf("refused, naming the kernel: %v", err)
							return
						}
						if _, err := json.Marshal(res); err != nil {
							t.Fatalf("the result does not encode: %v", err)
						}
					})
				}
			}
		}
		for _, v := range []float64{st.Min / 2, st.Max * 2} {
			spec := FitSpec{Kernel: fmt.Sprintf(format, strconv.FormatFloat(v, 'f', -1, 64))}
			if err := spec.Validate(); err == nil || !strings.Contains(annotations.ErrorMessage(err), st.Field) {
				t.Errorf("kernel %s (outside %s): Validate says %v; want a refusal naming %s", spec.Kernel, st.Range(), err, st.Field)
			}
		}
	}
}

// FuzzFitSpecValidate: any JSON spec is either refused by Validate with a
// message of bounded size, or has every numeric setting and kernel number
// inside its declared range. Validate never panics.
func FuzzFitSpecValidate(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"model":"bounded","dispersion":1e-320}`, `{"engine":"ep","sigma":1e308}`, `{"model":"auc","gamma":0}`,
		`{"model":"auc","gamma":"1e4","prior_scale":1e-4}`, `{"model":"confusion","concentration":1e-320}`,
		`{"kernel":"const:1e308"}`, `{"kernel":"rbf:gamma=0.000001+white:10000"}`, `{"engine":"ep","thresholds":[-1000,0,1000]}`,
		`{"chains":64,"samples":1000000,"burnin":1000000}`, `{"model":"robust","epsilon":0.4999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s FitSpec
		if json.Unmarshal(b, &s) != nil {
			return
		}
		err := s.Validate()
		if err != nil {
			if n := len(annotations.ErrorMessage(err)); n > 20000 {
				t.Fatalf("a refusal of %d bytes", n)
			}
			return
		}
		for _, r := range Settings() {
			if v := r.get(s); !r.In(v) && !(v == 0 && r.Zero != "") {
				t.Fatalf("Validate accepted %s = %v outside %s", r.Field, v, r.Range())
			}
		}
		for _, b := range s.Thresholds {
			if !(math.Abs(b) <= MaxThreshold) {
				t.Fatalf("Validate accepted threshold %v", b)
			}
		}
	})
}

#!/usr/bin/env bash
# ESS per second of concord's default ordinal sampler against Stan NUTS on
# the paper's toy (Rogers et al. sec. 3.1; ../toy), in one run on one
# machine: RBF gamma = 1, weak identifiability, v = lambda = 1, sigma_b = 1,
# 2 chains in parallel on both sides.
#
#   concord: minimum bulk ESS (rank-normalised, Vehtari et al. 2021) over
#            every alpha_l, b_lk and m_n, divided by the WHOLE fit's wall
#            time (eigendecomposition, burn-in, sampling, summaries);
#            2 chains x 2000 draws after 1000 burn-in sweeps.
#   Stan:    the same minimum over the same parameters (speed_toy.R),
#            divided by the SAMPLING time only (warmup excluded);
#            2 chains x 1000 draws after 1000 warmup iterations.
#
# Needs Go and, for Stan, the packages of README.md. Run from this folder:
#   bash speed_compare.sh [go seeds] [stan seeds]   (default "1 2 3" "1 2")
# Output goes to stdout; speed_compare_result.txt keeps a run.
set -euo pipefail
cd "$(dirname "$0")"
go_seeds=${1:-"1 2 3"}
stan_seeds=${2:-"1 2"}
bin=$(mktemp -d)/concord
trap 'rm -rf "$(dirname "$bin")"' EXIT
(cd ../../.. && go build -o "$bin" ./cmd/concord)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "concord (default sampler, 2 chains x 2000 after 1000 burn-in)"
printf "%-6s %-10s %-12s %-10s %-8s\n" seed seconds min_ess_bulk ess_per_s max_rhat
go_sum=0
for s in $go_seeds; do
	out=$(dirname "$bin")/fit-$s.json
	"$bin" fit --labels ../toy/ratings.csv --items ../toy/items.csv --scheme ordinal:1..5 \
		--kernel rbf:gamma=1 --identifiability weak --chains 2 --samples 2000 --burnin 1000 \
		--seed "$s" --out "$out" >/dev/null
	line=$(python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["diagnostics"]
print("%.3f %.1f %.1f %.4f" % (d["seconds"], d["min_ess_bulk"], d["min_ess_bulk"] / d["seconds"], d["max_rhat"]))
PY
)
	read -r secs ess rate rh <<<"$line"
	printf "%-6s %-10s %-12s %-10s %-8s\n" "$s" "$secs" "$ess" "$rate" "$rh"
	go_sum=$(python3 -c "print($go_sum + $rate)")
done
go_mean=$(python3 -c "print($go_sum / len('$go_seeds'.split()))")
echo
echo "Stan NUTS (rstan, 2 chains in parallel, 1000 warmup + 1000 sampling)"
stan_sum=0
for s in $stan_seeds; do
	res=$(Rscript speed_toy.R "$s" 2>/dev/null)
	secs=$(sed -n 's/^sampling seconds[^:]*: //p' <<<"$res")
	ess=$(sed -n 's/^min bulk ESS over alpha, b, m: \([0-9.]*\).*/\1/p' <<<"$res")
	rate=$(sed -n 's/^min bulk ESS per sampling second: //p' <<<"$res")
	echo "seed $s: sampling ${secs} s, min bulk ESS ${ess}, ${rate} ESS/s"
	stan_sum=$(python3 -c "print($stan_sum + $rate)")
done
stan_mean=$(python3 -c "print($stan_sum / len('$stan_seeds'.split()))")
echo
python3 -c "print('mean ESS/s: concord %.1f, Stan %.2f; ratio %.1f' % ($go_mean, $stan_mean, $go_mean / $stan_mean))"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

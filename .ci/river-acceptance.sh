#!/usr/bin/env bash
# river-acceptance.sh: the acceptance of background jobs on River, tried as a
# user would, with the real binary: one PostgreSQL database, `concord serve
# --workers 0` and two `concord worker` processes (--fan-out=false: each fit
# one job, the chains in one process). It checks that the same fit
# submitted twice is one job, kills (SIGKILL) the worker running a fit mid-fit
# and times how long the other takes to finish it, fills one project's cap and
# shows that another project's fit starts before the rest of the first's, and
# prints the job records (which worker attempted what). Then the fan-out: two
# workers started without a flag (fan-out is the default) run a 4-chain fit's chains (the fit document shows
# which worker ran which chain), one is killed (SIGKILL) while it runs a
# chain, the other finishes the fit, and its result is bit for bit that of
# the same seeded fit run in one process (fit 1). Last, concord eval --jobs
# runs 5 folds as jobs of two workers (it names each fold's worker) and
# writes the metrics of the evaluation in one process, byte for byte. Then the
# agreement of a project over --agreement-job-labels: asked twice, one
# analysis (the second request joined); its bootstrap (2000 replicates) runs
# as 8 part jobs over two workers (the job records name each part's
# replicates and worker), and the document equals byte for byte the one a
# server computes within the request. .ci/run runs it; by hand:
#
#   eval "$(bash db/testdata/start-postgres.sh)"
#   bash .ci/river-acceptance.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
go build -o "$work/concord" ./cmd/concord
B=$work/concord
base=${CONCORD_TEST_POSTGRES_DSN:?start PostgreSQL with db/testdata/start-postgres.sh}
db=${CONCORD_ACCEPTANCE_DB:-concord_river_acceptance} # its own database, dropped and made anew
psql "${base/concord@/postgres@}" -qAt -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db OWNER concord"
DSN=${base/\/concord_test/\/$db}
export CONCORD_ADMIN_TOKEN=acceptance-admin-token-0123456789
port=${CONCORD_ACCEPTANCE_PORT:-18181} # and this port and the next
$B serve --db "$DSN" --workers 0 --addr 127.0.0.1:$port --agreement-job-labels 1000 >"$work/serve.log" 2>&1 &
SP=$!
sleep 3
$B worker --db "$DSN" --concurrency 1 --name worker-a --stale-after 10s --fan-out=false >"$work/a.log" 2>&1 &
WA=$!
$B worker --db "$DSN" --concurrency 1 --name worker-b --stale-after 10s --fan-out=false >"$work/b.log" 2>&1 &
WB=$!
WC= WD= WE= SP2=
trap 'kill $SP $WA $WB $WC $WD $WE $SP2 2>/dev/null || true' EXIT
sleep 2
A="Authorization: Bearer $CONCORD_ADMIN_TOKEN"
U=http://127.0.0.1:$port/api/v1
json() { python3 -c "import sys,json; d=json.load(sys.stdin); print($1)"; }
K1=$(curl -s -X POST $U/projects -H "$A" -d '{"name":"essays","scheme":"ordinal:0..3"}' | json 'd["api_key"]')
K2=$(curl -s -X POST $U/projects -H "$A" -d '{"name":"other","scheme":"ordinal:0..3"}' | json 'd["api_key"]')
for p in 1 2; do
	curl -s -o /dev/null -X POST $U/projects/$p/imports -H "$A" \
		-F file=@cmd/concord/demodata/sirt_writing_ratings1/ratings.csv -F where=criterion=k1
done

echo "== the same fit twice"
spec='{"model":"ordinal","engine":"gibbs","chains":4,"samples":40000,"burnin":1000,"seed":1}'
curl -s -o "$work/d1" -w "first: %{http_code}\n" -X POST $U/projects/1/fits -H "Authorization: Bearer $K1" -d "$spec"
curl -s -D "$work/d2h" -o "$work/d2" -w "second: %{http_code}\n" -X POST $U/projects/1/fits -H "Authorization: Bearer $K1" -d "$spec"
json '"fit", d["id"], "duplicate:", d.get("duplicate")' <"$work/d2"
grep -i '^x-concord-duplicate-of' "$work/d2h"

echo "== kill -9 of the worker running fit 1"
while :; do
	read -r w prog < <(curl -s $U/fits/1 -H "$A" | json 'd.get("worker") or "-", d["progress"]')
	if [ "$w" != - ] && python3 -c "import sys; sys.exit(0 if $prog > 0.1 else 1)"; then break; fi
	sleep 0.5
done
echo "fit 1 runs on $w at progress $prog: kill -9"
if [ "$w" = worker-a ]; then kill -9 $WA; else kill -9 $WB; fi
killed=$(date +%s)
while :; do
	st=$(curl -s $U/fits/1 -H "$A" | json 'd["state"], d.get("worker"), "attempts", d["attempts"]')
	case "$st" in done* | failed* | cancelled*) break ;; esac
	sleep 1
done
echo "after the kill: $st, $(($(date +%s) - killed)) s later"

echo "== fairness: project 1 fills its cap (8), then project 2 submits one fit"
for s in 11 12 13 14 15 16 17 18; do
	curl -s -o /dev/null -w "%{http_code} " -X POST $U/projects/1/fits -H "Authorization: Bearer $K1" \
		-d "{\"model\":\"ordinal\",\"chains\":2,\"samples\":400,\"burnin\":100,\"seed\":$s}"
done
curl -s -o /dev/null -w "(one more: %{http_code})\n" -X POST $U/projects/1/fits -H "Authorization: Bearer $K1" \
	-d '{"model":"ordinal","engine":"gibbs","chains":2,"samples":400,"burnin":100,"seed":19}'
bid=$(curl -s -X POST $U/projects/2/fits -H "Authorization: Bearer $K2" -d '{"model":"ordinal","engine":"gibbs","chains":2,"samples":400,"burnin":100,"seed":1}' | json 'd["id"]')
until [ "$(curl -s $U/fits/$bid -H "$A" | json 'd["state"]')" = done ]; do sleep 1; done
curl -s $U/projects/1/fits -H "$A" >"$work/f1"
curl -s $U/fits/$bid -H "$A" >"$work/fb"
python3 - "$work/f1" "$work/fb" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["fits"]; b = json.load(open(sys.argv[2]))
before = [f["id"] for f in a if f["id"] > 1 and f.get("started_at") and f["started_at"] < b["started_at"]]
print("project 2's fit", b["id"], "started after these of project 1's capped fits:", before)
PY

echo "== job records"
curl -s "$U/jobs?limit=20" -H "$A" | python3 -c '
import json, sys
for j in reversed(json.load(sys.stdin)["jobs"]):
    print(j["id"], j["state"], "priority", j["priority"], "fit", j.get("fit_id"), "project", j.get("project_id"), "attempted by", j["attempted_by"], j.get("errors") or "")'

echo "== fan-out (the default): two workers run the chains of one fit"
until [ "$(curl -s $U/projects/1/fits -H "$A" | json 'sum(f["state"] in ("queued", "running") for f in d["fits"])')" = 0 ]; do sleep 1; done
kill -TERM $WA $WB 2>/dev/null || true
wait $WA $WB 2>/dev/null || true
$B worker --db "$DSN" --concurrency 1 --name worker-c --stale-after 10s >"$work/c.log" 2>&1 &
WC=$!
$B worker --db "$DSN" --concurrency 1 --name worker-d --stale-after 10s >"$work/d.log" 2>&1 &
WD=$!
fid=$(curl -s -X POST $U/projects/2/fits -H "Authorization: Bearer $K2" -d "$spec" | json 'd["id"]')
running() { # the worker running a chain some way in, once chains run on both workers
	curl -s $U/fits/$fid -H "$A" | python3 -c '
import json, sys
d = json.load(sys.stdin); ch = [c for c in d.get("chains") or [] if c["state"] == "running"]
busy = [c for c in ch if c["progress"] > 0.1]
if busy and len({c["worker"] for c in ch}) == 2:
    print(busy[0]["worker"], busy[0]["chain"], busy[0]["progress"], d["state"])
else:
    print("- - -", d["state"])'
}
while :; do
	read -r w c prog st < <(running)
	[ "$w" != - ] && break
	case "$st" in done | failed | cancelled) echo "fit $fid ended $st before both workers ran a chain"; exit 1 ;; esac
	sleep 0.5
done
curl -s $U/fits/$fid -H "$A" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["chains"]:
    print("  chain", c["chain"], c["state"], "worker", c.get("worker") or "-", "progress %.2f" % c["progress"])'
echo "fit $fid: chain $c runs on $w at $prog (chains on both workers): kill -9 $w"
if [ "$w" = worker-c ]; then kill -9 $WC; else kill -9 $WD; fi
killed=$(date +%s)
while :; do
	st=$(curl -s $U/fits/$fid -H "$A" | json 'd["state"]')
	case "$st" in done | failed | cancelled) break ;; esac
	sleep 1
done
echo "after the kill: $st, $(($(date +%s) - killed)) s later"
curl -s $U/fits/$fid -H "$A" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["chains"]:
    print("chain", c["chain"], c["state"], "worker", c.get("worker"), "attempts", c["attempts"], "job", c["job_id"])'
curl -s "$U/jobs?limit=12" -H "$A" | python3 -c '
import json, sys
for j in reversed(json.load(sys.stdin)["jobs"]):
    print(j["id"], j["kind"], "chain", j.get("chain", "-"), j["state"], "fit", j.get("fit_id"), "attempted by", j["attempted_by"], j.get("errors") or "")'
curl -s $U/fits/1/result -H "$A" >"$work/r1"
curl -s $U/fits/$fid/result -H "$A" >"$work/r2"
python3 - "$work/r1" "$work/r2" "$fid" <<'PY'
import json, sys
docs = []
for p in sys.argv[1:3]:
    d = json.load(open(p))
    # Timings differ from run to run; each must be there.
    for k in ("seconds", "sampling_seconds", "sweeps_per_second", "ess_per_cpu_second"):
        if not d["diagnostics"].pop(k, 0) > 0:
            print(p, "has no", k)
            sys.exit(1)
    docs.append(json.dumps(d, sort_keys=True))
same = docs[0] == docs[1]
print("fit", sys.argv[3], "(chains as jobs, a worker killed) and fit 1 (one process), same seed:", "bit for bit the same" if same else "DIFFERENT")
sys.exit(0 if same else 1)
PY
[ "$st" = done ]

echo "== concord eval --db DSN --jobs: 5 folds as jobs of two workers"
$B worker --db "$DSN" --concurrency 1 --name worker-e --stale-after 10s >"$work/e.log" 2>&1 &
WE=$!
sleep 1
ev=(eval --db "$DSN" --project other --folds 5 --engine gibbs --samples 600 --burnin 200 --rater-baselines 2)
$B "${ev[@]}" --jobs --out "$work/eval-jobs.json" 2>&1 | grep -E '^(Fold|concord eval: evaluation|[0-9]+ fits)'
$B "${ev[@]}" --out "$work/eval-local.json" | grep -E '^[0-9]+ fits'
if cmp -s "$work/eval-jobs.json" "$work/eval-local.json"; then
	echo "the metrics of the folds as jobs and of the evaluation in one process: byte for byte the same"
else
	echo "the metrics of the folds as jobs DIFFER from the evaluation in one process"
	exit 1
fi

echo "== agreement of a large project: its bootstrap in parts over two workers"
# Two workers are alive: worker-e and the one of worker-c and worker-d not killed.
curl -s -o /dev/null -X POST $U/projects -H "$A" -d '{"name":"rte","scheme":"binary:0,1,pos=1"}'
curl -s -o /dev/null -w "import of 8000 labels: %{http_code}\n" -X POST $U/projects/3/imports -H "$A" \
	-F file=@cmd/concord/demodata/snow2008_rte/ratings.csv
q="bootstrap=2000&seed=7"
for n in first second; do
	curl -s "$U/projects/3/agreement?$q" -H "$A" | json '"'$n' request:", d["status"], "analysis", d["agreement_id"], "joined", d["joined"]'
done
last=
while :; do
	code=$(curl -s -o "$work/ag" -w "%{http_code}" "$U/projects/3/agreement?$q" -H "$A")
	[ "$code" = 200 ] && break
	if [ "$code" != 202 ]; then
		echo "agreement: $code $(head -c 300 "$work/ag")"
		exit 1
	fi
	ph=$(json 'd["phase"]' <"$work/ag" | sed 's/, about [^(]* left//')
	if [ "$ph" != "$last" ]; then
		echo "  202: $ph"
		last=$ph
	fi
	sleep 0.2
done
curl -s "$U/jobs?limit=40" -H "$A" | python3 -c '
import json, sys
rows = [j for j in reversed(json.load(sys.stdin)["jobs"]) if j["kind"].startswith("agreement")]
for j in rows:
    print(j["id"], j["kind"], "analysis", j.get("agreement_id"), "replicates", j.get("replicates", "-"), j["state"], "attempted by", j["attempted_by"])
ws = sorted({j["attempted_by"][-1] for j in rows if j["kind"] == "agreement_part" and j["attempted_by"]})
print("the part jobs ran on", len(ws), "workers:", ws)
sys.exit(0 if len(ws) == 2 else 1)'
$B serve --db "$DSN" --workers 0 --addr 127.0.0.1:$((port + 1)) --agreement-job-labels -1 >"$work/serve2.log" 2>&1 &
SP2=$!
sleep 3
curl -s -o "$work/ag-local" "http://127.0.0.1:$((port + 1))/api/v1/projects/3/agreement?$q" -H "$A"
if cmp -s "$work/ag" "$work/ag-local"; then
	echo "the agreement document of the parts and the one computed within a request: byte for byte the same ($(wc -c <"$work/ag") bytes)"
else
	echo "the agreement document of the parts DIFFERS from the one computed within a request"
	exit 1
fi

#!/usr/bin/env bash
# river-acceptance.sh: the acceptance of background jobs on River, tried as a
# user would, with the real binary: one PostgreSQL database, `concord serve
# --workers 0` and two `concord worker` processes. It checks that the same fit
# submitted twice is one job, kills (SIGKILL) the worker running a fit mid-fit
# and times how long the other takes to finish it, fills one project's cap and
# shows that another project's fit starts before the rest of the first's, and
# prints the job records (which worker attempted what). Not run by .ci/run (it
# takes a few minutes); run it by hand:
#
#   eval "$(bash db/testdata/start-postgres.sh)"
#   bash .ci/river-acceptance.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
go build -o "$work/concord" ./cmd/concord
B=$work/concord
base=${CONCORD_TEST_POSTGRES_DSN:?start PostgreSQL with db/testdata/start-postgres.sh}
db=concord_river_acceptance
psql "${base/concord@/postgres@}" -qAt -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db OWNER concord"
DSN=${base/\/concord_test/\/$db}
export CONCORD_ADMIN_TOKEN=acceptance-admin-token-0123456789
port=18181
$B serve --db "$DSN" --workers 0 --addr 127.0.0.1:$port >"$work/serve.log" 2>&1 &
SP=$!
sleep 3
$B worker --db "$DSN" --concurrency 1 --name worker-a --stale-after 10s >"$work/a.log" 2>&1 &
WA=$!
$B worker --db "$DSN" --concurrency 1 --name worker-b --stale-after 10s >"$work/b.log" 2>&1 &
WB=$!
trap 'kill $SP $WA $WB 2>/dev/null || true' EXIT
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
spec='{"model":"ordinal","chains":4,"samples":8000,"burnin":1000,"seed":1}'
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
	-d '{"model":"ordinal","chains":2,"samples":400,"burnin":100,"seed":19}'
bid=$(curl -s -X POST $U/projects/2/fits -H "Authorization: Bearer $K2" -d '{"model":"ordinal","chains":2,"samples":400,"burnin":100,"seed":1}' | json 'd["id"]')
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

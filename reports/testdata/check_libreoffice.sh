#!/bin/sh
# check_libreoffice.sh BOOK.xlsx [SHEET...]
#
# Opens a concord workbook with LibreOffice Calc headless, exports every sheet
# to CSV and checks that
#   - LibreOffice loads and converts the file (exit status 0, no error output),
#   - every SHEET named (default: the sheets of an ordinal report) was exported,
#   - every sheet but Charts and Glossary has rows with numbers, and every
#     sheet has text,
#   - no cell holds an error value (#REF!, #VALUE!, #DIV/0!, #NAME?, #N/A,
#     #NUM!, #NULL!) or a LibreOffice error (Err:NNN).
# It prints one line per sheet and exits non-zero on the first failure.
# Needs soffice (Debian: apt-get install libreoffice-calc). Used by
# TestLibreOffice (go test ./reports) when soffice is on PATH.
set -eu

if [ $# -lt 1 ]; then
	echo "usage: $0 BOOK.xlsx [SHEET...]" >&2
	exit 2
fi
book=$1
shift
if [ $# -eq 0 ]; then
	set -- Summary Review Items Raters Thresholds Agreement Diagnostics Flags Glossary Charts
fi
[ -f "$book" ] || { echo "$book: no such file" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$book" "$work/book.xlsx"

# Filter options of the CSV export: comma, double quote, UTF-8, from row 1,
# formatted as shown, sheet -1 = every sheet into book-SHEET.csv.
filter='csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1'
if ! soffice -env:UserInstallation="file://$work/profile" --headless --norestore \
	--convert-to "$filter" --outdir "$work/out" "$work/book.xlsx" >"$work/log" 2>&1; then
	echo "FAIL: soffice could not convert $book:" >&2
	cat "$work/log" >&2
	exit 1
fi
if grep -qi 'error' "$work/log"; then
	echo "FAIL: soffice reported an error converting $book:" >&2
	cat "$work/log" >&2
	exit 1
fi

status=0
for sheet in "$@"; do
	csv="$work/out/book-$sheet.csv"
	if [ ! -s "$csv" ]; then
		echo "FAIL: sheet $sheet is missing or empty" >&2
		status=1
		continue
	fi
	if grep -nE '#REF!|#VALUE!|#DIV/0!|#NAME\?|#N/A|#NUM!|#NULL!|Err:[0-9]+' "$csv" >"$work/bad"; then
		echo "FAIL: sheet $sheet has error cells:" >&2
		head -5 "$work/bad" >&2
		status=1
		continue
	fi
	# Rows, rows with a numeric cell (as displayed, possibly with a % sign)
	# and rows with text.
	rows=$(wc -l <"$csv")
	nums=$(grep -cE '(^|,)"?-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?%?"?(,|$)' "$csv" || true)
	texts=$(grep -c '[A-Za-z]' "$csv" || true)
	if [ "$texts" -eq 0 ] || { [ "$sheet" != Charts ] && [ "$sheet" != Glossary ] && [ "$nums" -eq 0 ]; }; then
		echo "FAIL: sheet $sheet: $rows rows, $nums with numbers, $texts with text" >&2
		status=1
		continue
	fi
	echo "ok   $sheet: $rows rows, $nums with numbers, $texts with text"
done
exit $status

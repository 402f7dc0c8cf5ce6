#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The schemas users validate against are themselves valid: each one a
# draft-07 schema, strict as ajv --strict=true takes it (tests/check-schemas;
# ajv too when it is on PATH), and tsarun doctor --json follows its own.
# Needs neither root nor BPF.
. "$(dirname "$0")/../lib.sh"
cd "$T_TMP"

for s in "$REPO"/doc/*.schema.json; do
	if out=$(/usr/bin/python3 "$REPO/tests/check-schemas" "$s" 2>&1); then
		ok "$(basename "$s"): $(echo "$out" | sed 's/.*: //')"
	else
		not_ok "$(basename "$s") is strict" "${out//$'\n'/$'\n'#   }"
	fi
done
# The check can fail: the artifact's schema as it was, a required key its properties lack.
jq '.definitions.hist |= del(.properties)' "$REPO/doc/tsarun.schema.json" >old-hist.json
check "check-schemas refuses a required key that is not a property" \
	sh -c "! /usr/bin/python3 '$REPO/tests/check-schemas' old-hist.json | grep -q 'strict$' &&
		/usr/bin/python3 '$REPO/tests/check-schemas' old-hist.json | grep -q \"hist: required 'runqueue' is not in its properties\""
jq '.definitions.thread.properties.comm.maxLenght = 15' "$REPO/doc/tsarun.schema.json" >typo.json
check "check-schemas refuses a keyword draft-07 does not have" \
	sh -c "/usr/bin/python3 '$REPO/tests/check-schemas' typo.json | grep -q \"unknown keyword 'maxLenght'\""

"$TSARUN" doctor --json >doctor.json
equal "doctor --json: exit 0" "$?" 0
equal "doctor --json: says its schema" "$(jq -r .schema doctor.json)" tsarun-doctor/1
if out=$(/usr/bin/python3 "$REPO/tests/validate-artifact" --schema "$REPO/doc/tsarun-doctor.schema.json" doctor.json 2>&1); then
	ok "doctor --json validates against doc/tsarun-doctor.schema.json, every key declared"
else
	not_ok "doctor --json validates against doc/tsarun-doctor.schema.json" "${out//$'\n'/$'\n'#   }"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README is a manual a user acts on, so it is held to the code: its
# example outputs are the committed samples (examples/samples/, made by real
# runs and themselves checked by 46-samples), it documents exactly the
# options --help has, its links lead somewhere, and its set-up commands are
# on its first screen. Needs neither root nor BPF.
. "$(dirname "$0")/../lib.sh"
README=${README:-$REPO/README.md}
cd "$T_TMP"

# First screen: the two set-up commands.
for c in "make demo" "make deps check"; do
	check "README: '$c' in its first 15 lines" sh -c "head -15 '$README' | grep -q '^    $c '"
done

# Every block marked as a sample is the sample, byte for byte.
if out=$("$REPO/tests/readme-samples" "$README" 2>&1); then
	ok "README: its example outputs are the committed samples ($out)"
else
	not_ok "README: its example outputs are the committed samples" "${out//$'\n'/$'\n'#   }" \
		"after 'make samples', tests/readme-samples --update README.md rewrites them"
fi

# Options: --help's, and the README's (long ones anywhere; short ones on a
# command line that runs tsarun, up to the command's --).
"$TSARUN" --help >help.txt
grep -oE -- '--[a-z][a-z0-9-]*' help.txt | sort -u >help-long
grep -oE -- '(^|[][ ,|])-[a-zA-Z]\b' help.txt | grep -oE -- '-[a-zA-Z]' | sort -u >help-short
at_least "--help lists long options" "$(wc -l <help-long)" 40
# Other programs' options the README shows (sudo's, in the GitHub Actions set-up;
# bash's, on a script's #! line).
printf '%s\n' --preserve-env --posix >foreign
# (Link targets are not text: "#watching-a-running-process--p" is an anchor.)
sed -E 's/\]\([^)]*\)/]/g' "$README" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u |
	grep -vxF -f foreign >readme-long
awk '/^    |^```/ || inblock { print } /^```/ { inblock = !inblock }' "$README" |
	grep -oE '(^|[ ;&(])tsarun( [^ ]+)*' |
	awk '{ for (i = 2; i <= NF && $i != "--"; i++) if ($i ~ /^-[a-zA-Z]$/) print $i }' |
	sort -u >readme-short
at_least "README: tsarun command lines with short options found" "$(wc -l <readme-short)" 3
unknown=$(comm -23 readme-long help-long | tr '\n' ' ')
equal "README: every long option it documents is one --help has" "$unknown" ""
unknown=$(comm -23 readme-short help-short | tr '\n' ' ')
equal "README: every short option on its tsarun command lines is one --help has" "$unknown" ""
missing=$(comm -13 readme-long help-long | tr '\n' ' ')
equal "README: every option --help lists is in it" "$missing" ""

# Links: the files they point to exist, and an anchor names a heading of its
# file (as GitHub makes them: lower case, punctuation but - and _ dropped,
# spaces to -). The same for the links of doc/*.md.
links=$(/usr/bin/python3 - "$README" "$REPO"/doc/*.md <<'EOF'
import os, re, sys

def body(path):
    return re.sub(r"```.*?```", "", open(path, encoding="utf-8").read(), flags=re.S)

def slugs(path):
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", body(path), flags=re.M)}

bad = []
for md in sys.argv[1:]:
    for target in re.findall(r"\]\(([^)\s]+)\)", body(md)):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
        if not os.path.exists(full) or (anchor and anchor not in slugs(full)):
            bad.append(f"{os.path.basename(md)}: {target}")
print(", ".join(bad))
EOF
)
equal "README and doc/*.md: every link leads to a file, or to a heading of one" "$links" ""

# A user manual tells what to type, not the project's history: no commit ids
# (7 to 40 hex digits with a letter and a digit) in it or in doc/*.md.
ids=$(cat "$README" "$REPO"/doc/*.md | grep -owE '[0-9a-f]{7,40}' | grep '[a-f]' | grep '[0-9]' |
	sort -u | tr '\n' ' ')
equal "README and doc/*.md: no commit ids" "$ids" ""

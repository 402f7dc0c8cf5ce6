# An ERR trap that runs twice for one command: `eval false` runs it for
# false inside the eval, then again for the eval as it returns; `builtin
# eval false` does the same with both runs at one depth, and no command
# between them. Each run is one run of the trap, its body once per run.
errs=0
trap 'errs=$((errs + 1))' ERR
eval false
builtin eval false
for i in 1 2 3; do
	builtin eval false
done
echo "errs=$errs"

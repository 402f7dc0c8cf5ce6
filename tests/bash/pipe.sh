# A pipeline's parts run side by side: each lasts as long as its process.
sleep 0.15 | true
seq 3 | ( sleep 0.1; cat >/dev/null ) | wc -l >/dev/null
sleep 0.1 | sleep 0.1
for i in 1 2; do echo a | echo a | cat >/dev/null; done

# A pipeline's parts run side by side: each lasts as long as its process.
sleep 0.15 | true

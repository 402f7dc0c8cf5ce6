# What a background job runs is not itself a background job.
( sleep 0.1; sleep 0.1 ) &
wait

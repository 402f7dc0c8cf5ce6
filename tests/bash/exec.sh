# A command that replaces its bash process is timed to the end of that process.
( sleep 0.15 )
exec sleep 0.12

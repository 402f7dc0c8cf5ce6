# set +T: functions no longer inherit the DEBUG trap; the report says so.
set +o functrace
f() { echo in f; }
f

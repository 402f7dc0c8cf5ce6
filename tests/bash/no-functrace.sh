# set +T: the script turns functrace off; its functions are still recorded.
set +o functrace
f() { echo in f; }
f

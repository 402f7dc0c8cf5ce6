# SPDX-License-Identifier: MIT
# The script's own RETURN, ERR traps and functrace, errtrace, declare -t,
# trap -p: what it does and sees must be what it does and sees bare.
trap -p; echo "A:$(trap -p DEBUG)"
trap 'echo err $LINENO' ERR
trap 'echo ret ${FUNCNAME[0]}' RETURN
trap
f() { trap -p RETURN; false; return 3; }
f; echo "st=$?"
set -E
f; echo "st=$?"
set +E
echo "T? $- $SHELLOPTS"; set -o | grep functrace
set -T; echo "T? $-"; f; echo "st=$?"
set +T; f
declare -ft f; f
declare +ft f; f
shopt -so functrace; f; shopt -uo functrace
x=$(trap -p RETURN); echo "sub:[$x]"
( trap -p; f )
g() { trap 'echo g-own' RETURN; f; }
g; f
echo "_=$_"; true a b; f; echo "_=$_ ?=$?"
trap 'echo "ret:${FUNCNAME[0]}:$?"' RETURN
a() { return 4; }
b() { a; }
c() { trap 'echo c-own' RETURN; b; }
d() { trap - RETURN; a; }
b; echo "b=$?"
c; echo "c=$?"
trap 'echo top2' RETURN
d; echo "d=$?"
trap -p RETURN
b | cat
echo "$(b; echo in-comsub)"
e() ( echo sub-e; return 2 )
e; echo "e=$?"
echo 'echo sourced' >own-traps.inc
. ./own-traps.inc
x=$(. ./own-traps.inc); echo "comsub:[$x]"
( . ./own-traps.inc )
. ./own-traps.inc &
wait
declare -ft e; e; echo "traced e=$?"
trap 'echo "ret:${FUNCNAME[0]}"' RETURN
shopt -s extdebug; a; echo "extdebug $-"
shopt -u extdebug; a; echo "no extdebug $-"
( trap -p RETURN; trap 'echo S' RETURN; trap -p RETURN; trap - RETURN; echo "[$(trap -p RETURN)]"; trap -p RETURN )
echo "$(trap -p)"
